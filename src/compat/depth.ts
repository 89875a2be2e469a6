/**
 * The nesting bound: JSON.parse reads any depth, but everything after it that walks a value recursively
 * (schema checks, canonical JSON for the job id, the guardrails' slot walk, JSON.stringify on the way up)
 * overflows the stack somewhere past a few thousand levels and would answer 500. A request is therefore
 * measured once, iteratively, as soon as it is parsed, and refused 400 `nesting-too-deep` past the bound;
 * so is each tool call's `arguments` once parsed (a string that holds JSON is nesting too).
 */
import { GatewayError } from '../errors.js';
import { isRawNumber } from './json-numbers.js';

/** Deeper than any tool schema or argument object a client writes by hand; far below any stack limit. */
export const MAX_DEPTH = 64;

/**
 * The depth of a parsed JSON value (a scalar is 0, `[]` is 1), without recursion; stops past `limit`. The
 * containers still to read and their depths are kept in two parallel stacks, not a pair per container, and an
 * array's members are read by index (every call measures its body here).
 */
export function jsonDepth(value: unknown, limit = MAX_DEPTH): number {
  let deepest = 0;
  const values: unknown[] = [value];
  const depths: number[] = [0];
  while (values.length > 0) {
    const v = values.pop();
    const d = depths.pop()!;
    // A number kept as its source text (json-numbers.ts) is an object only in form: a leaf, like any number.
    if (v === null || typeof v !== 'object' || isRawNumber(v)) continue;
    const depth = d + 1;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    const members = Array.isArray(v) ? (v as unknown[]) : Object.values(v as Record<string, unknown>);
    for (let i = 0; i < members.length; i++) {
      const x = members[i];
      if (x !== null && typeof x === 'object' && !isRawNumber(x)) {
        values.push(x);
        depths.push(depth);
      }
    }
  }
  return deepest;
}

/** Throws 400 `nesting-too-deep` when `value` nests deeper than the bound; `where` names it for the client. */
export function checkDepth(value: unknown, where: string, param?: string): void {
  if (jsonDepth(value) > MAX_DEPTH) {
    throw new GatewayError('nesting-too-deep', `${where} nests deeper than ${MAX_DEPTH} levels`, param ? { param } : {});
  }
}
