/**
 * JSON parsed with its numbers kept as written. A tool call's arguments are parsed and re-serialised
 * (messages.ts says why), and a plain parse turns every number into a double: `12345678901234567890` came
 * out `12345678901234567000`, `9007199254740993` as `...992`, `1e400` as `null`, `-0` as `0`, `1.10` as
 * `1.1`, so the upstream got ids and amounts other than the ones the client sent. The reviver's source text
 * (Node >= 22: the third `context` argument, TC39 "JSON.parse source text access") keeps each number's own
 * token, and `JSON.rawJSON` makes JSON.stringify write that token back. Strings and keys are decoded and
 * re-encoded as before, and a duplicate key still keeps only its last value: what the guardrails read and
 * what goes upstream stay the same bytes.
 */

type Reviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;

/** The parts of the source-text proposal not yet in TypeScript's ES2023 lib. */
const json = JSON as unknown as {
  parse(text: string, reviver: Reviver): unknown;
  rawJSON(text: string): object;
  isRawJSON(value: unknown): boolean;
};

/** Each number as the raw JSON of its own token, so JSON.stringify writes it back exactly as written. */
const keepNumber: Reviver = (_key, value, context) => (typeof value === 'number' && context.source !== undefined ? json.rawJSON(context.source) : value);

/** `text` parsed, with every number held as its source text (throws as JSON.parse does). */
export function parseKeepingNumbers(text: string): unknown {
  return json.parse(text, keepNumber);
}

/** Whether `value` is a number held as its source text (a leaf, not a container). */
export function isRawNumber(value: unknown): boolean {
  return json.isRawJSON(value);
}
