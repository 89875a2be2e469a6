/**
 * Echoes: a secret found where it is assigned (`-- api_key: X`) is as live where the same value appears again
 * without a name beside it (`VALUES ('crm','X')`), which no detector reads as a secret on its own. Once a
 * value is found, its other exact occurrences anywhere in the request are masked as the same kind, by the same
 * rules. This is a shared stage after the findings of either engine, so both mask alike.
 *
 * Only values long and random enough that an exact repeat can be nothing else are echoed: a short password
 * (`hunter2`) or a word-like value could also be ordinary text elsewhere.
 */
import { looksRandom } from './secrets.js';
import { lastAtOrBefore } from './sorted.js';

export interface Found<K, V> {
  slot: number;
  kind: K;
  start: number;
  end: number;
  via?: V;
}

/** The shortest value echoed: as long as the shortest generic secret the entropy reading accepts. */
const MIN_ECHO = 20;
/** Distinct values searched for per request (each is one search of every text). */
const MAX_VALUES = 64;

const echoable = (value: string): boolean => value.length >= MIN_ECHO && !/\s/.test(value) && looksRandom(value.replace(/[^A-Za-z0-9]/g, ''));

/** The found secrets and, after them, every other exact occurrence of an echoable value among `texts`. */
export function withEchoes<K, V>(texts: readonly string[], found: readonly Found<K, V>[]): Found<K, V>[] {
  const out = [...found];
  const values = new Map<string, Found<K, V>>();
  for (const f of found) {
    const value = texts[f.slot]!.slice(f.start, f.end);
    if (!values.has(value) && values.size < MAX_VALUES && echoable(value)) values.set(value, f);
  }
  if (values.size === 0) return out;
  const covered = coverage(found);
  for (const [value, source] of values) {
    texts.forEach((text, slot) => {
      for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + value.length)) {
        if (covered(slot, at, at + value.length)) continue;
        out.push({ slot, kind: source.kind, start: at, end: at + value.length, ...(source.via !== undefined ? { via: source.via } : {}) });
      }
    });
  }
  return out;
}

/**
 * Whether a span lies inside a finding of its text: the findings of each text by start, with the furthest end
 * reached so far, so each question is one binary search (a request of one secret repeated thousands of times
 * asks it thousands of times; a scan of every finding each time was quadratic, 0.3 s at the input limit).
 */
function coverage<K, V>(found: readonly Found<K, V>[]): (slot: number, start: number, end: number) => boolean {
  const bySlot = new Map<number, { starts: number[]; reach: number[] }>();
  for (const f of [...found].sort((a, b) => a.slot - b.slot || a.start - b.start)) {
    let s = bySlot.get(f.slot);
    if (!s) bySlot.set(f.slot, (s = { starts: [], reach: [] }));
    s.reach.push(Math.max(f.end, s.reach.length > 0 ? s.reach[s.reach.length - 1]! : f.end));
    s.starts.push(f.start);
  }
  return (slot, start, end) => {
    const s = bySlot.get(slot);
    if (!s) return false;
    // The last finding that starts at or before `start`; any finding before it reaches no further than `reach`.
    const k = lastAtOrBefore(s.starts, start);
    return k >= 0 && s.reach[k]! >= end;
  };
}
