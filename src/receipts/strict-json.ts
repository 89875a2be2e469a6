/**
 * JSON as a verifier must read it: I-JSON (RFC 7493), which RFC 8785 requires of what it canonicalises, so
 * no object may name a key twice. JSON.parse keeps the last of two equal keys silently: a receipt listing
 * `chargedMicroUSD` twice would show a reader one value and be checked with another, and `portcullis
 * receipt verify` said it was valid.
 *
 * The text is parsed by JSON.parse first (so it is JSON, and its value is what is answered); then one pass
 * over its structure, with a stack rather than recursion (any depth), compares each object's keys as
 * decoded (`"\u0061"` and `"a"` are the same key). Nothing in the dependency tree reports duplicate keys,
 * and this pass needs only to find strings, braces and brackets in text JSON.parse already accepted.
 */

export class DuplicateKeyError extends Error {}

export function parseStrictJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  const frames: Array<{ keys: Set<string> | null; expectKey: boolean }> = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') frames.push({ keys: new Set(), expectKey: true });
    else if (c === '[') frames.push({ keys: null, expectKey: false });
    else if (c === '}' || c === ']') frames.pop();
    else if (c === ',') {
      const top = frames[frames.length - 1];
      if (top?.keys) top.expectKey = true;
    } else if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = frames[frames.length - 1];
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key))
          throw new DuplicateKeyError(
            `the JSON names the key ${JSON.stringify(key)} twice in one object (duplicate keys are refused: RFC 8785 inputs must be I-JSON)`,
          );
        top.keys.add(key);
        top.expectKey = false;
      }
      i = j;
    }
  }
  return value;
}
