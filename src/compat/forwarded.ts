/**
 * The forwarding schema: the one body the upstream gets, built field by field from the validated (and,
 * where the guardrails masked something, redacted) request. Only fields the parameter table forwards are
 * here - model (the route's own id), messages, max_tokens, tools, tool_choice, parallel_tool_calls - and
 * within messages only role, content, name, refusal, tool_calls and tool_call_id. Every string in it is a
 * guardrail slot (src/guard/slots.ts) and is counted by `forwardedChars`, except tool-call ids: those are
 * replaced by the gateway's own (`call_0`, `call_1`, ... in order of first appearance, the same id the same
 * replacement), so a client's id never reaches the upstream and the conversation's references still match.
 */
import type { ChatMessage } from './messages.js';

export interface ForwardedRequest {
  messages: ChatMessage[];
  max_tokens: number;
  tools?: unknown[] | undefined;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null | undefined;
}

export function upstreamBody(req: ForwardedRequest, upstreamModel: string): Record<string, unknown> {
  const ids = new Map<string, string>();
  const mint = (id: string): string => {
    let m = ids.get(id);
    if (m === undefined) ids.set(id, (m = `call_${ids.size}`));
    return m;
  };
  const messages = req.messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.content ?? null };
    if (m.name !== undefined) out['name'] = m.name;
    if (typeof m.refusal === 'string') out['refusal'] = m.refusal;
    if (m.tool_calls?.length) {
      out['tool_calls'] = m.tool_calls.map((tc) => ({ id: mint(tc.id), type: 'function', function: { name: tc.function.name, arguments: tc.function.arguments } }));
    }
    if (m.tool_call_id !== undefined) out['tool_call_id'] = mint(m.tool_call_id);
    return out;
  });
  const body: Record<string, unknown> = { model: upstreamModel, messages, max_tokens: req.max_tokens, stream: false };
  if (req.tools?.length) body['tools'] = req.tools;
  if (req.tool_choice !== undefined && req.tool_choice !== null) body['tool_choice'] = req.tool_choice;
  if (typeof req.parallel_tool_calls === 'boolean') body['parallel_tool_calls'] = req.parallel_tool_calls;
  return body;
}

/**
 * Characters of input the upstream reads: every forwarded string of every message (content, name, refusal,
 * tool-call names and arguments), the tool definitions as JSON, and the tool choice. This is what the input
 * limit and the reservation's worst case count, so no forwarded field is free.
 */
export function forwardedChars(req: Pick<ForwardedRequest, 'messages' | 'tools' | 'tool_choice'>): number {
  let n = 0;
  for (const m of req.messages) {
    n += (m.content?.length ?? 0) + (m.name?.length ?? 0) + (m.refusal?.length ?? 0);
    for (const c of m.tool_calls ?? []) n += c.function.name.length + c.function.arguments.length;
  }
  if (req.tools) n += JSON.stringify(req.tools).length;
  if (req.tool_choice !== undefined && req.tool_choice !== null && typeof req.tool_choice === 'object') n += JSON.stringify(req.tool_choice).length;
  return n;
}
