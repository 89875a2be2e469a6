/**
 * A memo of at most `limit` entries, the oldest dropped first, for a value computed again and again from the
 * same key: a principal calls again and again, and what is derived from its id (a log hash, a rate-limit key
 * tag) never changes. Bounded so that a stream of new keys (addresses, principals) cannot grow the process.
 */
export function boundedMemo<V>(limit: number, compute: (key: string) => V): (key: string) => V {
  const seen = new Map<string, V>();
  return (key) => {
    let value = seen.get(key);
    if (value === undefined) {
      value = compute(key);
      if (seen.size >= limit) seen.delete(seen.keys().next().value!);
      seen.set(key, value);
    }
    return value;
  };
}
