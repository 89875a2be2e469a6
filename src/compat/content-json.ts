/**
 * A long message content as JSON, serialised once per call. The job id hashes it (src/jobs/job.ts) and the
 * upstream body carries it (forwarded.ts); each was a JSON.stringify of the same string, and at 100 KB of
 * input one of them was ~3 % of the call's CPU.
 *
 * It is kept as UTF-8 bytes, not a string: the bytes are what the hash reads and what undici writes (it
 * turns a string body into a Buffer itself), and living outside the JS heap a 100 KB copy kept for the
 * length of a call is not copied by every young-generation collection it survives (kept as a string it was:
 * the profile showed the GC share rise by more than the stringify saved).
 *
 * The bytes are remembered against the message object, with the string they were made from: a message whose
 * content was replaced since (a redaction) is serialised afresh, so what is hashed or sent is always the
 * content as it is now. Short contents are not remembered: serialising them costs less than the bookkeeping.
 */
const LONG = 1024;

const known = new WeakMap<object, { content: string; json: Buffer }>();

/** A content long enough to serialise once and share. */
export function isLongContent(content: unknown): content is string {
  return typeof content === 'string' && content.length >= LONG;
}

/** The UTF-8 bytes of JSON.stringify(content), reused when this message's content was serialised before. */
export function contentJson(message: object, content: string): Buffer {
  const seen = known.get(message);
  // The same string is the same pointer: this comparison is O(1) unless the content was replaced.
  if (seen !== undefined && seen.content === content) return seen.json;
  const json = Buffer.from(JSON.stringify(content), 'utf8');
  known.set(message, { content, json });
  return json;
}

/** A copy of a message (the upstream's form of it) reuses what its original's content serialised to. */
export function shareContentJson(from: object, to: object): void {
  const seen = known.get(from);
  if (seen !== undefined) known.set(to, seen);
}
