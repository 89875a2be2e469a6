/**
 * The one JSON canonical form the gateway writes: RFC 8785 (JSON Canonicalization Scheme). Receipts' leaf
 * hashes (src/receipts/canonical.ts), the signatures of pre-log receipts (src/receipts/legacy.ts), job ids and
 * idempotency keys (src/jobs/job.ts) all go through `canonicalJson`, so a verifier recomputes any of them with
 * any RFC 8785 implementation.
 *
 * It is `safe-stable-stringify` in its strict, deterministic mode: keys sorted by UTF-16 code units (the
 * default sort), numbers as `String(n)` (ECMAScript's shortest form, which RFC 8785 adopts), strings with
 * JSON.stringify's escapes, no whitespace. For every value JSON holds that is byte for byte RFC 8785, at about
 * a third of the cost of the `canonicalize` package (test/receipts/canonical.test.ts holds the two together on
 * real receipts, job keys and unicode keys). What RFC 8785 refuses is refused here too: NaN and Infinity
 * (strict mode throws), and a lone UTF-16 surrogate, which JSON.stringify writes as a `\udXXX` escape (a
 * paired one it writes as itself), so an escape of that form in the output is exactly a lone surrogate in
 * the input.
 */
import { configure } from 'safe-stable-stringify';

const stringify = configure({ deterministic: true, strict: true, bigint: false });

/** A `\ud800`-`\udfff` escape that is not itself an escaped backslash followed by "ud..." text. */
const LONE_SURROGATE_ESCAPE = /(?<!\\)(?:\\\\)*\\ud[89a-f]/;

/** The RFC 8785 text of a JSON value. Throws a TypeError on what RFC 8785 cannot express. */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = stringify(value);
  } catch (err) {
    throw new TypeError(`not canonicalisable: ${(err as Error).message}`, { cause: err });
  }
  if (text === undefined) throw new TypeError('not canonicalisable: not a JSON value');
  if (LONE_SURROGATE_ESCAPE.test(text)) throw new TypeError('not canonicalisable: a lone UTF-16 surrogate (RFC 8785 takes I-JSON only)');
  return text;
}
