/**
 * The echo check (docs/decisions.md): the answer's `model` must be what the catalog's echo rule expects.
 * `strict`: exactly the id the gateway sent upstream (the catalog id, or the id the dedicated origin serves).
 * `shape-and-content`: a non-empty id of model-id form, and a well-formed, non-empty answer.
 * A mismatch is answered 502 `upstream-model-mismatch`, is not charged, and is recorded on the receipt.
 */
import type { EchoRule } from '../config/types.js';
import type { UpstreamAnswer } from '../openai/answer.js';

const MODEL_ID_FORM = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,255}$/;

export function echoMatches(rule: EchoRule, expected: string, answer: UpstreamAnswer): boolean {
  if (rule === 'strict') return answer.model === expected;
  const first = answer.choices[0]!.message;
  const hasContent = (first.content !== null && first.content.length > 0) || (first.tool_calls?.length ?? 0) > 0;
  return MODEL_ID_FORM.test(answer.model) && hasContent;
}
