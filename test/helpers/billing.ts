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
    t
      .replace('perDay: 1000', `perDay: ${freePerDay}`)
      .replace('tokensPerDay: 102400\n    ceilingPerDay: 102400', 'tokensPerDay: 250\n    ceilingPerDay: 450'),
  );
  return root;
}

let n = 0;
/**
 * A chat body of 2 bytes of input and max_tokens 90, distinct each time, so no two calls share a job: by
 * its `seed` (part of a job's identity, never forwarded nor counted), and by its content (two base-36
 * digits, so a test can tell its upstream requests apart) for the first 1,296 calls.
 */
export function body(model = 'shared-general-a'): { model: string; max_tokens: number; seed: number; messages: Array<{ role: string; content: string }> } {
  n += 1;
  return { model, max_tokens: 90, seed: n, messages: [{ role: 'user', content: (n % 1296).toString(36).padStart(2, '0') }] };
}
