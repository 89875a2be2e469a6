/**
 * An OpenAI chat.completion in from an upstream: read into the normalised answer the gateway serves and
 * bills on. Anything malformed is an upstream error (502 `upstream-error`); usage that is not a count of
 * tokens (missing, negative, fractional, a string, above 2^53) is 502 `upstream-usage-malformed`, which the
 * failure path charges at the worst case reserved: the upstream ran and we cannot tell for how much, so the
 * bound the principal agreed to is charged rather than nothing (failing open would let a broken or hostile
 * upstream serve free). Error messages never carry the upstream's text, which may echo the prompt.
 *
 * Only what the gateway serves is read, in the shapes OpenAI documents, so that every string kept is one
 * `maskAnswer` masks: `content` is text or null (an array of text parts, as some compatible servers
 * send, is joined; anything else is 502 `upstream-error` rather than an empty answer); a legacy
 * `function_call` (OpenAI's form before tool calls) is read as the one tool call it is; `finish_reason` is
 * one of OpenAI's values (`function_call` read as `tool_calls`), and any other value, or none, is what
 * the message shows: `tool_calls` when it has tool calls, else `stop`. An unknown string is not relayed:
 * it is a free-form field the client would read unmasked.
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
  created: number;
  model: string;
  choices: Array<{ index: number; message: AnswerMessage; finish_reason: string }>;
  usage: Usage;
  /** Passed to the client as OpenAI sends them, when the upstream gives them (not billed on). */
  system_fingerprint?: string;
  reasoningTokens?: number;
}

/** The finish reasons OpenAI answers with; the legacy `function_call` is read as `tool_calls`. */
const FINISH_REASONS = new Set(['stop', 'length', 'tool_calls', 'content_filter']);

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
  // In key order: the receipt carries it, and its canonical text has nothing to reorder then (src/canonical-json.ts).
  return { cached_tokens: cached, completion_tokens: completion, prompt_tokens: prompt, total_tokens: prompt + completion };
}

/** Text content: a string, null (none), or an array of text parts joined; anything else is malformed. */
function readContent(raw: unknown, at: string, bad: (why: string) => GatewayError): string | null {
  if (typeof raw === 'string') return raw;
  if (raw === null || raw === undefined) return null;
  const parts = Array.isArray(raw) ? (raw as Array<{ type?: unknown; text?: unknown } | null>) : undefined;
  if (parts?.every((p) => typeof p === 'object' && p !== null && p.type === 'text' && typeof p.text === 'string')) {
    return parts.map((p) => p!.text as string).join('');
  }
  throw bad(`${at} is neither text nor null`);
}

/** A legacy `function_call` ({name, arguments}) as the one tool call it stands for; none when absent. */
function legacyCall(raw: unknown): unknown[] | undefined {
  if (raw === null || typeof raw !== 'object') return undefined;
  return [{ function: raw }];
}

/** One of OpenAI's finish reasons; otherwise what the message shows (see above). */
function finishReason(raw: unknown, message: AnswerMessage): string {
  if (raw === 'function_call') return 'tool_calls';
  if (typeof raw === 'string' && FINISH_REASONS.has(raw)) return raw;
  return message.tool_calls ? 'tool_calls' : 'stop';
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
    const message: AnswerMessage = { role: 'assistant', content: readContent(m['content'], `choices[${index}].message.content`, bad) };
    const calls = Array.isArray(m['tool_calls']) && m['tool_calls'].length > 0 ? (m['tool_calls'] as unknown[]) : legacyCall(m['function_call']);
    if (calls) {
      message.tool_calls = calls.map((raw, k) => {
        const tc = raw as Record<string, unknown> | null;
        const fn = tc?.['function'] as Record<string, unknown> | undefined;
        if (typeof fn?.['name'] !== 'string') throw bad(`choices[${index}].message.tool_calls[${k}] has no function name`);
        return {
          id: typeof tc!['id'] === 'string' ? tc!['id'] : `call_${index}_${k}`,
          type: 'function' as const,
          function: { name: fn['name'], arguments: typeof fn['arguments'] === 'string' ? fn['arguments'] : JSON.stringify(fn['arguments'] ?? {}) },
        };
      });
    }
    if (typeof m['refusal'] === 'string') message.refusal = m['refusal'];
    return { index, message, finish_reason: finishReason(choice?.['finish_reason'], message) };
  });
  const completionDetails = ((j['usage'] as Record<string, unknown> | undefined)?.['completion_tokens_details'] ?? {}) as Record<string, unknown>;
  const reasoning = completionDetails['reasoning_tokens'];
  return {
    ...(typeof j['system_fingerprint'] === 'string' ? { system_fingerprint: j['system_fingerprint'] } : {}),
    ...(typeof reasoning === 'number' && Number.isSafeInteger(reasoning) && reasoning >= 0 ? { reasoningTokens: reasoning } : {}),
    created: nonNegInt(j['created']) || Math.floor(Date.now() / 1000),
    model: typeof j['model'] === 'string' ? j['model'] : '',
    choices,
    usage: readUsage(j['usage']),
  };
}

/** What masks an answer: one text on its own, and one message's texts read together. */
export interface AnswerMasks {
  text(text: string): string;
  /** Content, refusal, and each tool call's name and arguments, read in that order as one conversation. */
  message(message: AnswerMessage): AnswerMessage;
}

/**
 * The answer masked in every string the client reads or the gateway keeps: each message's texts together
 * (so a key split between the content and a tool call's arguments, or over two calls, is masked in both
 * parts, as in a request), and `model`, `system_fingerprint` and each tool call's id on their own. The rest
 * is not free text: `finish_reason` is one of a fixed set (normaliseAnswer). The upstream's own completion
 * id is not read at all (the gateway names the completion `chatcmpl-<call id>`), so there is nothing of it
 * to mask or keep.
 */
export function maskAnswer(answer: UpstreamAnswer, masks: AnswerMasks): UpstreamAnswer {
  return {
    ...answer,
    model: masks.text(answer.model),
    ...(answer.system_fingerprint !== undefined ? { system_fingerprint: masks.text(answer.system_fingerprint) } : {}),
    choices: answer.choices.map((c) => {
      const message = masks.message(c.message);
      const calls = message.tool_calls;
      return { ...c, message: calls ? { ...message, tool_calls: calls.map((tc) => ({ ...tc, id: masks.text(tc.id) })) } : message };
    }),
  };
}
