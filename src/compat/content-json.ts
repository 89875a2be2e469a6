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
 * Most often it is not serialised at all: the request's body already holds it. A large body is parsed with a
 * reviver that keeps, for each long `content`, the JSON text it was parsed from (`parseKeepingContents`: the
 * engine hands a reviver each string's source text). That text is what JSON.stringify writes for the string
 * whenever it holds no `\u` escape and no `\/`: JSON allows no raw quote, backslash or control character in a
 * string, JSON.stringify writes `\"`, `\\`, `\b`, `\f`, `\n`, `\r` and `\t` as they are written there, and a
 * body decoded from UTF-8 holds no lone surrogate for it to escape (an invalid sequence decodes to U+FFFD). A
 * text with either escape (or `\\u`, an escaped backslash before a `u`, which the one search cannot tell
 * apart) is serialised as before. At 100 KB, about 150 µs of JSON.stringify and its 100 KB string per call.
 *
 * The bytes are remembered against the message object, with the string they were made from: a message whose
 * content was replaced since (a redaction) is serialised afresh, so what is hashed or sent is always the
 * content as it is now. Short contents are not remembered: serialising them costs less than the bookkeeping.
 */
const LONG = 1024;

/**
 * The JSON of a content: its bytes once made, or (from the parse) the source text they will be made from. One
 * entry is shared by a message and its copies, and made into bytes in place, so that the source (a slice that
 * holds the whole body's text) is let go for all of them at once: kept for the length of the call, the body's
 * 100 KB would be copied by every young-generation collection it survived.
 */
interface Known {
  readonly content: string;
  json: Buffer | undefined;
  source: string | undefined;
}

const known = new WeakMap<object, Known>();

/** A content long enough to serialise once and share. */
export function isLongContent(content: unknown): content is string {
  return typeof content === 'string' && content.length >= LONG;
}

/** Escapes JSON.stringify never writes (`\u`, `\/`); `\\u` and `\\/` match too, and are serialised as before. */
const NOT_AS_STRINGIFY_WRITES = /\\[u/]/;

/** The UTF-8 bytes of JSON.stringify(content), reused when this message's content was serialised or parsed before. */
export function contentJson(message: object, content: string): Buffer {
  const seen = known.get(message);
  // The same string is the same pointer: this comparison is O(1) unless the content was replaced.
  if (seen !== undefined && seen.content === content) {
    if (seen.json !== undefined) return seen.json;
    const source = seen.source!;
    seen.json = Buffer.from(NOT_AS_STRINGIFY_WRITES.test(source) ? JSON.stringify(content) : source, 'utf8');
    seen.source = undefined;
    return seen.json;
  }
  const json = Buffer.from(JSON.stringify(content), 'utf8');
  known.set(message, { content, json, source: undefined });
  return json;
}

/** A copy of a message (the upstream's form of it) reuses what its original's content serialised to. */
export function shareContentJson(from: object, to: object): void {
  const seen = known.get(from);
  if (seen !== undefined) known.set(to, seen);
}

/**
 * JSON.parse(text), each long `content` member's source text remembered against the object it is a member
 * of (the message): the engine gives a reviver the source of the value the parse kept, the last of
 * duplicate keys as JSON.parse keeps the last. The reviver returns every value as it got it, so the result
 * is JSON.parse's. An engine that gives no source leaves nothing remembered.
 *
 * A reviver costs per value, not per byte: the engine keeps each value's source while it parses and makes a
 * string of it for every call (about 0.7 µs). A chat body of 100 KB holds a few dozen values; a body of the
 * same size made of small values holds tens of thousands, and with the reviver its parse took up to 60 times
 * as long (2 MiB of zeros: 700 ms against 11). So the reviver is used only on a text with at most one comma or
 * opening bracket for every 64 characters (a bound on its values: each but the first of a container follows a
 * comma; counted with an early stop, about 18 µs at 100 KB), and it gives up after `MOST_CALLS` values (the
 * text is then parsed plainly). What a body shaped to pass that bound can still cost is the values' sources
 * kept during the parse: 1.7 times the plain parse at 2 MiB of strings, 2.3 times with thousands of levels of
 * nesting (bench/README.md).
 */
export function parseKeepingContents(text: string): unknown {
  if (!fewValues(text)) return JSON.parse(text);
  calls = 0;
  try {
    return JSON.parse(text, keepContentSource);
  } catch (err) {
    if (err instanceof SyntaxError) throw err;
    // Too many values after all, or (a RangeError) a body so deep that the reviver's recursive walk overflows
    // the stack where the plain parse does not: validation measures its depth and refuses it as before.
    return JSON.parse(text);
  }
}

const CHARS_PER_VALUE = 64;
const MOST_CALLS = 64;
let calls = 0;
const TOO_MANY = new Error('more values than the reviver is given');

function fewValues(text: string): boolean {
  let budget = Math.floor(text.length / CHARS_PER_VALUE);
  for (const c of [',', '[', '{']) {
    for (let at = text.indexOf(c); at !== -1; at = text.indexOf(c, at + 1)) if (--budget < 0) return false;
  }
  return true;
}

function keepContentSource(this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
  if (++calls > MOST_CALLS) throw TOO_MANY;
  if (key === 'content' && isLongContent(value) && typeof context?.source === 'string')
    known.set(this as object, { content: value, json: undefined, source: context.source });
  return value;
}
