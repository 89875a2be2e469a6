/**
 * Small limits and a fixed call shape for the metering suites, so every number in them can be worked out
 * by hand: free allowance 3 requests/day (or as given); rung card 250 tokens/day, ceiling 450. A call sends
 * one message of 2 bytes (an input bound of 2 + 8 per message = 10 tokens) and max_tokens 90: a worst case
 * of 100 tokens, held at 10 x 0.9 + 90 x 4.5 = 414 micro-USD when paid.
 */
import { configRoot, editFile } from './gateway.js';

export const WORST = 414;

export function smallLimitsRoot(freePerDay = 3): string {
  const root = configRoot();
  editFile(root, 'rules/rungs.yaml', (t) =>
    t.replace('perDay: 1000', `perDay: ${freePerDay}`).replace('tokensPerDay: 102400\n    ceilingPerDay: 102400', 'tokensPerDay: 250\n    ceilingPerDay: 450'),
  );
  return root;
}

let n = 0;
/** 36 characters that are no letter: two of them are never a word the guardrails could read as a topic. */
const SYMBOLS = '0123456789!#$%&*+-./:;<=>?@^_~()[]{}';
/**
 * A chat body of 2 bytes of input and max_tokens 90, distinct each time, so no two calls share a job: by
 * its `seed` (part of a job's identity, never forwarded nor counted), and by its content (two symbols, so a
 * test can tell its upstream requests apart) for the first 1,296 calls. No letters: base-36 pairs such as
 * "cp" and "vx" are guardrail topic words, and a test's call must not be refused for its filler.
 */
export function body(model = 'shared-general-a'): { model: string; max_tokens: number; seed: number; messages: Array<{ role: string; content: string }> } {
  n += 1;
  const i = n % 1296;
  return { model, max_tokens: 90, seed: n, messages: [{ role: 'user', content: SYMBOLS[Math.floor(i / 36)]! + SYMBOLS[i % 36]! }] };
}
