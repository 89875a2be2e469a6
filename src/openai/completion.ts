/**
 * Completions and stream chunks out: the chat.completion the client gets for an answered call, built from
 * the upstream's answer and the call's settlement (so a re-attached request gets the very answer the first
 * one paid for), and the emulated stream of it. Non-streaming: the completion, which carries `billing`,
 * `receiptId`, `usage` and `chargedMicroUSD`. Streaming (`stream: true`), emulated on the finished answer as
 * the spec says: one content chunk (role assistant, content, and tool calls as OpenAI clients expect them in
 * a delta; finish_reason null), one finish chunk (empty delta, finish_reason, billing, receiptId,
 * chargedMicroUSD), then `data: [DONE]`. Usage follows OpenAI's rule exactly (see streamBody): clients add
 * usage up across chunks, so it may appear once at most.
 */
import type { Settlement } from '../metering/meter.js';
import type { JobResult } from '../jobs/job.js';
import type { UpstreamAnswer } from './answer.js';

type Completion = Record<string, unknown> & {
  choices: Array<{ index: number; message: { content: string | null; tool_calls?: unknown[]; refusal?: string | null }; finish_reason: string }>;
};

/** What a chat.completion is made of: the call's id, the (masked) answer, its settlement and receipt id. */
export interface Answered {
  callId: string;
  answer: UpstreamAnswer;
  settlement: Settlement;
  receiptId: string;
}

/** The chat.completion the client gets: the upstream's answer, with the gateway's usage, billing and receipt. */
export function completionBody({ callId, answer: a, settlement: s, receiptId }: Answered): Record<string, unknown> {
  return {
    id: `chatcmpl-${callId}`,
    object: 'chat.completion',
    created: a.created,
    model: a.model,
    ...(a.system_fingerprint !== undefined ? { system_fingerprint: a.system_fingerprint } : {}),
    choices: a.choices.map((c) => ({ index: c.index, message: c.message, logprobs: null, finish_reason: c.finish_reason })),
    usage: {
      prompt_tokens: s.usage.prompt_tokens,
      completion_tokens: s.usage.completion_tokens,
      total_tokens: s.usage.total_tokens,
      prompt_tokens_details: { cached_tokens: s.usage.cached_tokens },
      ...(a.reasoningTokens !== undefined ? { completion_tokens_details: { reasoning_tokens: a.reasoningTokens } } : {}),
    },
    billing: s.billing,
    receiptId,
    chargedMicroUSD: s.chargedMicroUSD,
  };
}

/**
 * The exact bytes of the emulated stream for a finished completion, in OpenAI's shape. Without
 * `includeUsage` (`stream_options.include_usage`) no chunk has a `usage` key at all. With it, every chunk
 * carries `usage: null` except the last, OpenAI's usage chunk after the finish chunk: empty `choices` and
 * the `usage` object, then `[DONE]`. A non-null usage anywhere else breaks clients: some add usage across
 * chunks (and would count it twice), some take the first chunk with usage for the last one. The gateway's
 * own fields (billing, receiptId, chargedMicroUSD) stay on the finish chunk, where the spec puts them.
 */
export function streamBody(completion: Record<string, unknown>, includeUsage = false): string {
  const c = completion as Completion;
  const choice = c.choices[0]!;
  const base = {
    id: c['id'],
    object: 'chat.completion.chunk',
    created: c['created'],
    model: c['model'],
    ...(c['system_fingerprint'] !== undefined ? { system_fingerprint: c['system_fingerprint'] } : {}),
  };
  const delta: Record<string, unknown> = { role: 'assistant', content: choice.message.content ?? '' };
  if (choice.message.tool_calls) delta['tool_calls'] = choice.message.tool_calls.map((tc, index) => ({ index, ...(tc as object) }));
  if (typeof choice.message.refusal === 'string') delta['refusal'] = choice.message.refusal;
  const noUsage = includeUsage ? { usage: null } : {};
  const content = { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], ...noUsage };
  const finish = {
    ...base,
    choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: choice.finish_reason }],
    ...noUsage,
    billing: c['billing'],
    receiptId: c['receiptId'],
    chargedMicroUSD: c['chargedMicroUSD'],
  };
  const usage = includeUsage ? `data: ${JSON.stringify({ ...base, choices: [], usage: c['usage'] })}\n\n` : '';
  return `data: ${JSON.stringify(content)}\n\ndata: ${JSON.stringify(finish)}\n\n${usage}data: [DONE]\n\n`;
}

/** A job's result: the chat.completion as the client gets it, and its parts for the jobs API. */
export function jobResult(answered: Answered): JobResult {
  const first = answered.answer.choices[0]!;
  return {
    completion: completionBody(answered),
    content: first.message.content,
    toolCalls: first.message.tool_calls ?? null,
    finishReason: first.finish_reason,
  };
}
