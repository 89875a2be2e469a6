/**
 * Small limits and a fixed call shape for the metering suites, so every number in them can be worked out
 * by hand: free allowance 3 requests/day (or as given); rung card 250 tokens/day, ceiling 450. A call asks
 * for 30 characters of input (10 tokens, estimated) and max_tokens 90: a worst case of 100 tokens, held at
 * 10 x 0.9 + 90 x 4.5 = 414 micro-USD when paid.
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
/** A chat body of 30 characters of input (distinct each time, so no two calls share a job) and max_tokens 90. */
export function body(model = 'shared-general-a'): { model: string; max_tokens: number; messages: Array<{ role: string; content: string }> } {
  return { model, max_tokens: 90, messages: [{ role: 'user', content: `question ${String(++n).padStart(21, '0')}` }] };
}
