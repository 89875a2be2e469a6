/**
 * An OpenAI chat.completion in from an upstream: read into the normalised answer the gateway serves and
 * bills on. Anything malformed is an upstream error (502 `upstream-error`); usage that is not a count of
 * tokens (missing, negative, fractional, a string, above 2^53) is 502 `upstream-usage-malformed`, which the
 * failure path charges at the worst case reserved: the upstream ran and we cannot tell for how much, so the
 * bound the principal agreed to is charged rather than nothing (failing open would let a broken or hostile
 * upstream serve free). Error messages never carry the upstream's text, which may echo the prompt.
 */
import { GatewayError } from '../errors.js';
import type { Usage } from '../metering/price.js';

export interface AnswerMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  refusal?: string | null;
}

export interface UpstreamAnswer {
  id: string;
  created: number;
  model: string;
  choices: Array<{ index: number; message: AnswerMessage; finish_reason: string }>;
  usage: Usage;
  /** Passed to the client as OpenAI sends them, when the upstream gives them (not billed on). */
  system_fingerprint?: string;
  reasoningTokens?: number;
}

const nonNegInt = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** The usage an upstream reported, or a 502 `upstream-usage-malformed` when it is not counts of tokens. */
function readUsage(raw: unknown): Usage {
  const bad = (why: string) => new GatewayError('upstream-usage-malformed', `the upstream reported usage that is not a count of tokens: ${why}`);
  if (!raw || typeof raw !== 'object') throw bad('usage is missing');
  const u = raw as Record<string, unknown>;
  if (!isCount(u['prompt_tokens'])) throw bad('prompt_tokens');
  if (!isCount(u['completion_tokens'])) throw bad('completion_tokens');
  const prompt = u['prompt_tokens'];
  const completion = u['completion_tokens'];
  if (!Number.isSafeInteger(prompt + completion)) throw bad('the total is above 2^53');
  const details = u['prompt_tokens_details'];
  let cached = 0;
  if (details !== undefined && details !== null) {
    if (typeof details !== 'object') throw bad('prompt_tokens_details');
    const c = (details as Record<string, unknown>)['cached_tokens'];
    if (c !== undefined && c !== null) {
      if (!isCount(c)) throw bad('cached_tokens');
      if (c > prompt) throw bad('cached_tokens above prompt_tokens');
      cached = c;
    }
  }
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cached_tokens: cached };
}

/** Reads the parts of an OpenAI chat.completion the gateway serves; anything malformed is an upstream error. */
export function normaliseAnswer(json: unknown): UpstreamAnswer {
  const bad = (why: string) => new GatewayError('upstream-error', `the upstream answer is malformed: ${why}`);
  if (!json || typeof json !== 'object') throw bad('not an object');
  const j = json as Record<string, unknown>;
  if (!Array.isArray(j['choices']) || j['choices'].length === 0) throw bad('no choices');
  const choices = (j['choices'] as unknown[]).map((c, index) => {
    const choice = c as Record<string, unknown> | null;
    const m = choice?.['message'] as Record<string, unknown> | undefined;
    if (!m || typeof m !== 'object') throw bad(`choices[${index}] has no message`);
    const content = typeof m['content'] === 'string' ? m['content'] : null;
    const message: AnswerMessage = { role: 'assistant', content };
    if (Array.isArray(m['tool_calls']) && m['tool_calls'].length > 0) {
      message.tool_calls = (m['tool_calls'] as Array<Record<string, unknown>>).map((tc, k) => {
        const fn = tc?.['function'] as Record<string, unknown> | undefined;
        if (typeof fn?.['name'] !== 'string') throw bad(`choices[${index}].message.tool_calls[${k}] has no function name`);
        return {
          id: typeof tc['id'] === 'string' ? tc['id'] : `call_${index}_${k}`,
          type: 'function' as const,
          function: { name: fn['name'], arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : JSON.stringify(fn['arguments'] ?? {}) },
        };
      });
    }
    if (typeof m['refusal'] === 'string') message.refusal = m['refusal'];
    const finish = typeof choice?.['finish_reason'] === 'string' ? choice['finish_reason'] : message.tool_calls ? 'tool_calls' : 'stop';
    return { index, message, finish_reason: finish };
  });
  const completionDetails = ((j['usage'] as Record<string, unknown> | undefined)?.['completion_tokens_details'] ?? {}) as Record<string, unknown>;
  const reasoning = completionDetails['reasoning_tokens'];
  return {
    ...(typeof j['system_fingerprint'] === 'string' ? { system_fingerprint: j['system_fingerprint'] } : {}),
    ...(typeof reasoning === 'number' && Number.isSafeInteger(reasoning) && reasoning >= 0 ? { reasoningTokens: reasoning } : {}),
    id: typeof j['id'] === 'string' ? j['id'] : '',
    created: nonNegInt(j['created']) || Math.floor(Date.now() / 1000),
    model: typeof j['model'] === 'string' ? j['model'] : '',
    choices,
    usage: readUsage(j['usage']),
  };
}

/**
 * The answer with `map` applied to every string of it the client reads: content, refusal, and each tool
 * call's id, name and arguments (the guardrails mask secrets in the model's own output this way).
 */
export function mapAnswerText(answer: UpstreamAnswer, map: (text: string) => string): UpstreamAnswer {
  return {
    ...answer,
    choices: answer.choices.map((c) => ({
      ...c,
      message: {
        ...c.message,
        content: c.message.content === null ? null : map(c.message.content),
        ...(typeof c.message.refusal === 'string' ? { refusal: map(c.message.refusal) } : {}),
        ...(c.message.tool_calls
          ? {
              tool_calls: c.message.tool_calls.map((tc) => ({
                ...tc,
                id: map(tc.id),
                function: { ...tc.function, name: map(tc.function.name), arguments: map(tc.function.arguments) },
              })),
            }
          : {}),
      },
    })),
  };
}
