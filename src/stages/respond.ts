/**
 * respond: the one way out for an answered call, built from the finished job's chat.completion (so a
 * re-attached request gets the very answer the first one paid for). Non-streaming: the completion, which
 * carries `billing`, `receiptId`, `usage` and `chargedMicroUSD`. Streaming (`stream: true`), emulated on the
 * finished answer as the spec says: one content chunk (role assistant, content, and tool calls as OpenAI
 * clients expect them in a delta; finish_reason null), one finish chunk (empty delta, finish_reason,
 * billing, receiptId, chargedMicroUSD), then `data: [DONE]`. Usage follows OpenAI's rule exactly (see
 * streamBody): clients add usage up across chunks, so it may appear once at most. The first byte goes out
 * when the answer is complete.
 */
import type { Context, Next } from 'koa';
import type { Call } from './call.js';
import type { Settlement } from '../metering/meter.js';
import { newReceiptId } from '../receipts/receipt.js';

type Completion = Record<string, unknown> & {
  choices: Array<{ index: number; message: { content: string | null; tool_calls?: unknown[]; refusal?: string | null }; finish_reason: string }>;
};

export function completionBody(call: Call, s: Settlement = call.settlement!): Record<string, unknown> {
  const a = call.answer!;
  return {
    id: `chatcmpl-${call.id}`,
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
    // Built inside the settlement too (the job's end rides in its write), before call.receiptId is set.
    receiptId: call.receiptId ?? newReceiptId(call.id),
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

export function respond() {
  return async function respond(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const completion = call.job!.result!.completion;
    if (call.valid!.stream) {
      ctx.set('content-type', 'text/event-stream');
      ctx.set('cache-control', 'no-cache');
      ctx.body = streamBody(completion, call.valid!.includeUsage);
    } else {
      ctx.body = completion;
    }
    await next();
  };
}
