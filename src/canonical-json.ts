/**
 * The one JSON canonical form the gateway writes: RFC 8785 (JSON Canonicalization Scheme). Receipts' leaf
 * hashes (src/receipts/canonical.ts), the signatures of pre-log receipts (src/receipts/legacy.ts), job ids and
 * idempotency keys (src/jobs/job.ts) all go through `canonicalJson`, so a verifier recomputes any of them with
 * any RFC 8785 implementation.
 *
 * The form is `safe-stable-stringify`'s in its strict, deterministic mode: keys sorted by UTF-16 code units
 * (the default sort), numbers as `String(n)` (ECMAScript's shortest form, which RFC 8785 adopts), strings with
 * JSON.stringify's escapes, no whitespace. For every value JSON holds that is byte for byte RFC 8785, at about
 * a third of the cost of the `canonicalize` package (test/receipts/canonical.test.ts holds the two together on
 * real receipts, job keys and unicode keys). What RFC 8785 refuses is refused here too: NaN and Infinity
 * (strict mode throws), and a lone UTF-16 surrogate, which JSON.stringify writes as a `\udXXX` escape (a
 * paired one it writes as itself), so an escape of that form in the output is exactly a lone surrogate in
 * the input.
 *
 * How the text is written: by the platform's own JSON.stringify, given the value with every object's members
 * in key order. On plain data — objects whose prototype is Object's (or none) and that have no `toJSON`,
 * arrays, strings, finite numbers, booleans, null — JSON.stringify writes what the library writes but for
 * the order of members: the library quotes a string that needs no escape as it is and hands any other to
 * JSON.stringify; a finite number is `String(n)` in both (-0 is "0"); both leave an undefined member out and
 * write an undefined array element as null. So `inKeyOrder` hands JSON.stringify the value itself when every
 * object in it already has its keys in order (the receipt and the decision record are built so: every call
 * writes them), or a copy of the objects that do not. Everything else goes to the library whole, as before:
 * a Date or any other object with a prototype of its own or a `toJSON`, NaN, Infinity, a function, a symbol,
 * a bigint, a value nested deeper than 64 (a cycle), an object to reorder that has a key starting with a digit
 * (an array index: an object lists those first, in numeric order, whatever order they are put in), and an
 * object to copy with a key `__proto__` (which an assignment would not create). A getter is read twice, to
 * order and to write (the library reads it once): the gateway's records are plain data and have none. The
 * library stays the reference: test/canonical-json-library.test.ts holds the two byte for byte, and to the
 * `canonicalize` package, on thousands of seeded random values, receipts and decision records among them.
 */
import { configure } from 'safe-stable-stringify';

const stringify = configure({ deterministic: true, strict: true, bigint: false });

/** A `\ud800`-`\udfff` escape that is not itself an escaped backslash followed by "ud..." text. */
const LONE_SURROGATE_ESCAPE = /(?<!\\)(?:\\\\)*\\ud[89a-f]/;

/** Deeper than any record the gateway writes; what is deeper (or a cycle) is the library's, which refuses a cycle. */
const MAX_DEPTH = 64;

/** Thrown inside `inKeyOrder` for a value the library writes instead (made once: no stack a call); never leaves this module. */
const LIBRARY_WRITES_IT = new Error('the library writes this value');

/** Sorted by UTF-16 code units in place: insertion for a few keys, as the library sorts them (`sort()` above 200). */
function sortKeys(keys: string[]): void {
  if (keys.length > 200) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let at = i;
    while (at > 0 && keys[at - 1]! > key) {
      keys[at] = keys[at - 1]!;
      at--;
    }
    keys[at] = key;
  }
}

/** A copy of an object whose keys were not in order (or whose members were reordered), its members in order. */
function reordered(o: Record<string, unknown>, keys: string[], inOrder: boolean, changed: Map<string, unknown> | null): Record<string, unknown> {
  for (const key of keys) {
    const c = key.charCodeAt(0);
    if ((!inOrder && c >= 0x30 && c <= 0x39) || key === '__proto__') throw LIBRARY_WRITES_IT;
  }
  if (!inOrder) sortKeys(keys);
  const copy: Record<string, unknown> = {};
  for (const key of keys) copy[key] = changed?.has(key) ? changed.get(key) : o[key];
  return copy;
}

/**
 * The value with every object's members in key order: the value itself when it is so already, else a copy of
 * what is not (the rest shared). Throws LIBRARY_WRITES_IT for what is not plain data.
 */
function inKeyOrder(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      throw LIBRARY_WRITES_IT;
    case 'object':
      break;
    default:
      throw LIBRARY_WRITES_IT;
  }
  if (value === null) return value;
  if (depth > MAX_DEPTH || (value as { toJSON?: unknown }).toJSON !== undefined) throw LIBRARY_WRITES_IT;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Array.prototype) {
    const a = value as unknown[];
    let copy: unknown[] | null = null;
    for (let i = 0; i < a.length; i++) {
      const was = a[i];
      const now = inKeyOrder(was, depth + 1);
      if (copy !== null) copy.push(now);
      else if (now !== was) {
        copy = a.slice(0, i);
        copy.push(now);
      }
    }
    return copy ?? a;
  }
  if (proto !== Object.prototype && proto !== null) throw LIBRARY_WRITES_IT;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  let inOrder = true;
  let changed: Map<string, unknown> | null = null;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (i > 0 && !(keys[i - 1]! < key)) inOrder = false;
    const was = o[key];
    const now = inKeyOrder(was, depth + 1);
    if (now !== was) (changed ??= new Map()).set(key, now);
  }
  return inOrder && changed === null ? o : reordered(o, keys, inOrder, changed);
}

/** The text of a value: JSON.stringify's of it in key order, or the library's for what is not plain data. */
function write(value: unknown): string | undefined {
  let ordered: unknown;
  try {
    ordered = inKeyOrder(value, 0);
  } catch (err) {
    if (err !== LIBRARY_WRITES_IT) throw err;
    return stringify(value);
  }
  return JSON.stringify(ordered);
}

/**
 * The value with every object's members in key order (a copy of what is not; the value itself when nothing
 * is), for a value kept and written again call after call, such as the policy's memoized decisions: its
 * canonical text then has nothing to reorder. What is not plain data is given back as it is.
 */
export function inCanonicalOrder<T>(value: T): T {
  try {
    return inKeyOrder(value, 0) as T;
  } catch (err) {
    if (err !== LIBRARY_WRITES_IT) throw err;
    return value;
  }
}

/** The RFC 8785 text of a JSON value. Throws a TypeError on what RFC 8785 cannot express. */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = write(value);
  } catch (err) {
    throw new TypeError(`not canonicalisable: ${(err as Error).message}`, { cause: err });
  }
  if (text === undefined) throw new TypeError('not canonicalisable: not a JSON value');
  // Only an escape can be one: a text without `\ud` (most, and every record the gateway writes) has none.
  if (text.includes('\\ud') && LONE_SURROGATE_ESCAPE.test(text))
    throw new TypeError('not canonicalisable: a lone UTF-16 surrogate (RFC 8785 takes I-JSON only)');
  return text;
}
