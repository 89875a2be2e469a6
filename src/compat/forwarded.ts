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
import { contentJson, isLongContent, shareContentJson } from './content-json.js';

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
      out['tool_calls'] = m.tool_calls.map((tc) => ({
        id: mint(tc.id),
        type: 'function',
        function: { name: tc.function.name, arguments: tc.function.arguments },
      }));
    }
    if (m.tool_call_id !== undefined) out['tool_call_id'] = mint(m.tool_call_id);
    shareContentJson(m, out);
    return out;
  });
  const body: Record<string, unknown> = { model: upstreamModel, messages, max_tokens: req.max_tokens, stream: false };
  if (req.tools?.length) body['tools'] = req.tools;
  if (req.tool_choice !== undefined && req.tool_choice !== null) body['tool_choice'] = req.tool_choice;
  if (typeof req.parallel_tool_calls === 'boolean') body['parallel_tool_calls'] = req.parallel_tool_calls;
  return body;
}

/**
 * The upstream body as the bytes undici sends: JSON.stringify(body), as a string when every message content
 * is short (undici encodes it), else as UTF-8 bytes with each long content spliced in from what the job id
 * already serialised (content-json.ts) instead of serialising 100 KB of it a second time. The splice writes
 * keys in insertion order and leaves out a field whose value JSON leaves out (undefined), as JSON.stringify.
 */
export function upstreamPayload(body: Record<string, unknown>): string | Buffer {
  const messages = body['messages'];
  if (!Array.isArray(messages) || !messages.some((m) => isLongContent((m as { content?: unknown } | null)?.content))) return JSON.stringify(body);
  const out = new Spliced();
  out.text('{');
  let first = true;
  for (const [key, value] of Object.entries(body)) {
    if (key === 'messages') {
      out.text(`${first ? '' : ','}"messages":[`);
      for (let i = 0; i < messages.length; i++) messageJson(out, messages[i], i === 0);
      out.text(']');
    } else if (!member(out, key, value, first)) continue;
    first = false;
  }
  out.text('}');
  return out.bytes();
}

function messageJson(out: Spliced, m: unknown, first: boolean): void {
  const comma = first ? '' : ',';
  if (m === null || typeof m !== 'object' || Array.isArray(m) || typeof (m as { toJSON?: unknown }).toJSON === 'function') {
    out.text(`${comma}${JSON.stringify(m) ?? 'null'}`);
    return;
  }
  out.text(`${comma}{`);
  let firstKey = true;
  for (const [key, value] of Object.entries(m)) {
    if (key === 'content' && isLongContent(value)) {
      out.text(`${firstKey ? '' : ','}"content":`);
      out.splice(contentJson(m, value));
    } else if (!member(out, key, value, firstKey)) continue;
    firstKey = false;
  }
  out.text('}');
}

/** Writes `"key":value`, after a comma unless first; false (nothing written) when JSON leaves the value out. */
function member(out: Spliced, key: string, value: unknown, first: boolean): boolean {
  const json = JSON.stringify(value);
  if (json === undefined) return false;
  out.text(`${first ? '' : ','}${JSON.stringify(key)}:${json}`);
  return true;
}

/** JSON text with byte runs spliced in. */
class Spliced {
  private readonly chunks: Buffer[] = [];
  private pending = '';
  text(s: string): void {
    this.pending += s;
  }
  splice(b: Buffer): void {
    this.chunks.push(Buffer.from(this.pending, 'utf8'), b);
    this.pending = '';
  }
  bytes(): Buffer {
    this.chunks.push(Buffer.from(this.pending, 'utf8'));
    return Buffer.concat(this.chunks);
  }
}

/**
 * Characters of input the upstream reads: every forwarded string of every message (content, name, refusal,
 * tool-call names and arguments), the tool definitions as JSON, and the tool choice (as JSON, a string
 * choice too). This is what the input limit counts, so no forwarded field the client wrote is free.
 */
export function forwardedChars(req: Pick<ForwardedRequest, 'messages' | 'tools' | 'tool_choice'>): number {
  let n = 0;
  for (const m of req.messages) {
    n += (m.content?.length ?? 0) + (m.name?.length ?? 0) + (m.refusal?.length ?? 0);
    for (const c of m.tool_calls ?? []) n += c.function.name.length + c.function.arguments.length;
  }
  if (req.tools) n += JSON.stringify(req.tools).length;
  if (req.tool_choice !== undefined && req.tool_choice !== null) n += JSON.stringify(req.tool_choice).length;
  return n;
}

/**
 * Tokens a chat template adds around each message (role markers, separators, the turn's end): ChatML and
 * Llama 3 use five or six, so eight covers the templates of the models served here.
 */
export const MESSAGE_ALLOWANCE_TOKENS = 8;

/**
 * Tokens a chat template adds around each tool call of an assistant turn, beyond its id, name and arguments
 * (counted as bytes): the call's own markers and the JSON it is rendered in (`<tool_call>{"name": ...,
 * "arguments": ...}</tool_call>`, Llama 3's `{"name": ..., "parameters": ...}`), about a dozen at most.
 */
export const TOOL_CALL_ALLOWANCE_TOKENS = 16;

const bytes = (s: unknown): number => (typeof s === 'string' ? Buffer.byteLength(s, 'utf8') : 0);

/**
 * A true upper bound on the input tokens the upstream can count for the request, read off the very body
 * `upstreamBody` builds for it (so the gateway's own tool-call ids are counted as sent): the UTF-8 bytes of
 * every string forwarded in a message (content, name, refusal, tool_call_id, each tool call's id, name and
 * arguments), of the tool definitions and the tool choice as JSON (a byte-level tokenizer never makes more
 * tokens than bytes: each token stands for at least one byte), plus `MESSAGE_ALLOWANCE_TOKENS` a message
 * and `TOOL_CALL_ALLOWANCE_TOKENS` a tool call for the template's own tokens. It sizes the reservation; a
 * provider that still reports more is charged all it reports (docs/billing.md).
 */
export function inputTokenBound(req: Pick<ForwardedRequest, 'messages' | 'tools' | 'tool_choice'>): number {
  const body = upstreamBody({ messages: req.messages, tools: req.tools, tool_choice: req.tool_choice, max_tokens: 0 }, '');
  let n = 0;
  for (const m of body['messages'] as Array<Record<string, unknown>>) {
    n += MESSAGE_ALLOWANCE_TOKENS + bytes(m['content']) + bytes(m['name']) + bytes(m['refusal']) + bytes(m['tool_call_id']);
    for (const c of (m['tool_calls'] ?? []) as Array<{ id: string; function: { name: string; arguments: string } }>) {
      n += TOOL_CALL_ALLOWANCE_TOKENS + bytes(c.id) + bytes(c.function.name) + bytes(c.function.arguments);
    }
  }
  if (body['tools'] !== undefined) n += bytes(JSON.stringify(body['tools']));
  if (body['tool_choice'] !== undefined) n += bytes(JSON.stringify(body['tool_choice']));
  return n;
}
