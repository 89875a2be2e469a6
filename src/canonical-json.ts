/**
 * The one JSON canonical form the gateway writes: RFC 8785 (JSON Canonicalization Scheme). Receipts' leaf
 * hashes (src/receipts/canonical.ts), decision records (src/decisions/record.ts), the signatures of pre-log
 * receipts (src/receipts/legacy.ts), job ids and idempotency keys (src/jobs/job.ts) all go through
 * `canonicalJson`, so a verifier recomputes any of them with any RFC 8785 implementation.
 *
 * Keys sorted by UTF-16 code units, numbers as `String(n)` (ECMAScript's shortest form, which RFC 8785
 * adopts), strings with JSON.stringify's escapes, no whitespace. For every value JSON holds that is byte for
 * byte RFC 8785 (test/canonical-json.test.ts holds it to the `canonicalize` package on random values, and to
 * `safe-stable-stringify`'s strict deterministic mode, which wrote it before). What RFC 8785 refuses is
 * refused here too: NaN and Infinity, and a lone UTF-16 surrogate, which JSON.stringify writes as a
 * `\udXXX` escape (a paired one it writes as itself), so an escape of that form in a string's JSON is
 * exactly a lone surrogate in it.
 *
 * Every call writes two of these texts (the decision record and the receipt, about 1.3 KB each), and the
 * library built each through a string per member and per level (`"key":value` pieces concatenated upwards,
 * then flattened): about 14 KB of garbage per text, a tenth of what a small call leaves in the young
 * generation (bench/README.md, "2026-11-28, allocation"). Here the pieces go into one array that lives as
 * long as the process and are joined once: the text itself is the only string of any size made, strings
 * without an escape are not copied, and each key's `"key":` is made once. Plain data only (objects, arrays,
 * strings, finite numbers, booleans, null, undefined members, `toJSON` as a Date has it): anything else
 * (a typed array, a function, a bigint, a non-finite number, a cycle) goes to the library for the whole
 * value, which writes or refuses it as it always did.
 */
import { configure } from 'safe-stable-stringify';

const library = configure({ deterministic: true, strict: true, bigint: false });

/** A `\ud800`-`\udfff` escape that is not itself an escaped backslash followed by "ud..." text. */
const LONE_SURROGATE_ESCAPE = /(?<!\\)(?:\\\\)*\\ud[89a-f]/;
/** What JSON.stringify escapes (or may: a surrogate, when lone): a string without any is written as it is. */
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/** Thrown inside the fast path for a value it does not write itself; never leaves this module. */
class NotPlain extends Error {}
const NOT_PLAIN = new NotPlain('not plain data');
/** Thrown for a lone surrogate: the text is refused whoever writes it. */
class LoneSurrogate extends Error {}

/** Each key's `"key":` and `,"key":`, made once: the receipts' and records' keys are a small fixed set. */
const FIRST_KEY = new Map<string, string>();
const NEXT_KEY = new Map<string, string>();
const KEYS_KEPT = 2048;
const KEY_KEPT_CHARS = 64;

function keyPiece(key: string, next: boolean): string {
  const kept = (next ? NEXT_KEY : FIRST_KEY).get(key);
  if (kept !== undefined) return kept;
  const json = quoted(key);
  const first = `${json}:`;
  // Keys a client chose (a tool's JSON arguments, via the job id) are written, not kept, past the bounds.
  if (FIRST_KEY.size < KEYS_KEPT && key.length <= KEY_KEPT_CHARS) {
    FIRST_KEY.set(key, first);
    NEXT_KEY.set(key, `,${first}`);
  }
  return next ? `,${first}` : first;
}

/** A string's JSON, refusing a lone surrogate. */
function quoted(s: string): string {
  const json = JSON.stringify(s);
  if (LONE_SURROGATE_ESCAPE.test(json)) throw new LoneSurrogate();
  return json;
}

/**
 * What a text is written with: its pieces, the objects open around the value being written (a cycle is
 * refused) and each open object's keys. One writer serves the process, so that a call allocates none of
 * these nor their growth; a `toJSON` that canonicalises something itself finds it busy and takes its own.
 */
class Writer {
  readonly parts: string[] = [];
  n = 0;
  readonly open: object[] = [];
  depth = 0;
  /** Per depth, the keys of the object open there (own enumerable, sorted): only the first `count` count. */
  readonly keys: string[][] = [];
  busy = false;

  push(s: string): void {
    this.parts[this.n++] = s;
  }

  string(s: string): void {
    if (NEEDS_ESCAPE.test(s)) this.push(quoted(s));
    else {
      this.push('"');
      this.push(s);
      this.push('"');
    }
  }

  /**
   * Writes `value`; false when it writes nothing (undefined: a member left out, `null` in an array). `key` is
   * what a `toJSON` is given: the member's name, or the element's index (made a string only then).
   */
  value(key: string | number, value: unknown): boolean {
    switch (typeof value) {
      case 'string':
        this.string(value);
        return true;
      case 'number':
        if (!Number.isFinite(value)) throw NOT_PLAIN;
        this.push(String(value));
        return true;
      case 'boolean':
        this.push(value ? 'true' : 'false');
        return true;
      case 'undefined':
        return false;
      case 'object':
        if (value === null) {
          this.push('null');
          return true;
        }
        if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
          const json: unknown = (value as { toJSON(key: string): unknown }).toJSON(String(key));
          if (json === null || typeof json !== 'object') return this.value(key, json);
          value = json;
        }
        if (ArrayBuffer.isView(value) || this.isOpen(value as object)) throw NOT_PLAIN;
        this.open[this.depth++] = value as object;
        if (Array.isArray(value)) this.array(value);
        else this.object(value as Record<string, unknown>);
        this.open[--this.depth] = EMPTY;
        return true;
      default:
        throw NOT_PLAIN;
    }
  }

  isOpen(o: object): boolean {
    for (let i = 0; i < this.depth; i++) if (this.open[i] === o) return true;
    return false;
  }

  array(a: unknown[]): void {
    this.push('[');
    for (let i = 0; i < a.length; i++) {
      if (i > 0) this.push(',');
      if (!this.value(i, a[i])) this.push('null');
    }
    this.push(']');
  }

  object(o: Record<string, unknown>): void {
    // Own enumerable keys (Object.keys' set) read with for-in, which allocates nothing for an ordinary object,
    // into this depth's array, sorted in place.
    const keys = (this.keys[this.depth] ??= []);
    let count = 0;
    for (const k in o) if (Object.hasOwn(o, k)) keys[count++] = k;
    sortKeys(keys, count);
    this.push('{');
    let next = false;
    for (let i = 0; i < count; i++) {
      const key = keys[i]!;
      // The key's slot first, filled once its value is written: an undefined member is left out, key and all
      // (and a key RFC 8785 refuses refuses the text only when its member is written).
      const at = this.n;
      this.push('');
      if (this.value(key, o[key])) {
        this.parts[at] = keyPiece(key, next);
        next = true;
      } else this.n = at;
    }
    this.push('}');
  }

  /** The text written; the writer is then ready for the next, holding nothing of this one. */
  text(): string {
    // join takes a work array as long as the array: this text's pieces only. A shorter length within the
    // array's capacity moves no memory, and the next text grows it back within it.
    this.parts.length = this.n;
    return this.parts.join('');
  }

  reset(): void {
    // '' and EMPTY are one string and one object, not allocations: nothing of the text is kept alive.
    for (let i = 0; i < this.n && i < this.parts.length; i++) this.parts[i] = '';
    for (let i = 0; i < this.depth; i++) this.open[i] = EMPTY;
    // After a text of more pieces than this, the array starts again empty: one odd value keeps no long array.
    if (this.parts.length > PIECES_KEPT) this.parts.length = 0;
    this.n = 0;
    this.depth = 0;
    this.busy = false;
  }
}

const PIECES_KEPT = 4096;
const EMPTY = {};
const shared = new Writer();

/**
 * Sorts the first `count` keys in UTF-16 code-unit order in place: an insertion sort for the few keys an
 * object has (no work array), the built-in sort for many (an insertion sort would be quadratic in them).
 */
function sortKeys(keys: string[], count: number): void {
  if (count > 64) {
    const sorted = keys.slice(0, count).sort();
    for (let i = 0; i < count; i++) keys[i] = sorted[i]!;
    return;
  }
  for (let i = 1; i < count; i++) {
    const k = keys[i]!;
    let j = i;
    while (j > 0 && keys[j - 1]! > k) {
      keys[j] = keys[j - 1]!;
      j--;
    }
    keys[j] = k;
  }
}

/** The plain-data path: the text, or NOT_PLAIN thrown for what it leaves to the library. */
function written(value: unknown): string | undefined {
  const w = shared.busy ? new Writer() : shared;
  w.busy = true;
  try {
    return w.value('', value) ? w.text() : undefined;
  } finally {
    w.reset();
  }
}

/** The RFC 8785 text of a JSON value. Throws a TypeError on what RFC 8785 cannot express. */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = written(value);
  } catch (err) {
    if (err instanceof LoneSurrogate) throw new TypeError('not canonicalisable: a lone UTF-16 surrogate (RFC 8785 takes I-JSON only)');
    if (!(err instanceof NotPlain)) throw err;
    text = viaLibrary(value);
  }
  if (text === undefined) throw new TypeError('not canonicalisable: not a JSON value');
  return text;
}

/** What the plain-data path leaves: written (or refused) by safe-stable-stringify's strict mode, as before. */
function viaLibrary(value: unknown): string | undefined {
  let text: string | undefined;
  try {
    text = library(value);
  } catch (err) {
    throw new TypeError(`not canonicalisable: ${(err as Error).message}`, { cause: err });
  }
  if (text !== undefined && LONE_SURROGATE_ESCAPE.test(text)) throw new TypeError('not canonicalisable: a lone UTF-16 surrogate (RFC 8785 takes I-JSON only)');
  return text;
}
