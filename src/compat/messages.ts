/**
 * Messages as clients send them, made into the one form the gateway scans, counts, keys jobs by and
 * forwards. Parsed once, here, right after the shape check:
 *
 * - the `developer` role (newer SDKs and agent frameworks send it where older ones send `system`) is the
 *   system turn, and is forwarded as `system`, which every upstream takes;
 * - content given as an array of text parts is joined with a line break (an assistant turn's `refusal` parts
 *   join its `refusal`); any other part type (image, audio, file) is refused by name, as the spec takes text
 *   only;
 * - a tool call's `arguments` that hold JSON are parsed, bounded in depth and re-serialised: what the
 *   guardrails read and what goes upstream are then the same bytes, so a duplicate key or an escape cannot
 *   show the scanner one value and the model another. Numbers keep their source text (json-numbers.ts):
 *   the upstream gets `12345678901234567890` or `1.10` as the client wrote it, not a double's rounding.
 *
 * - fields clients keep on a replayed assistant message that are not conversation are dropped, never
 *   forwarded: `annotations` (citations of OpenAI's answer), `provider_specific_fields`, `reasoning_content`
 *   and `thinking_blocks` (LiteLLM's Message object), and `function_call` and `audio` when null; a
 *   non-null legacy `function_call` or `audio` is refused like the request-level fields of those names.
 *
 * The client's object is not changed; a new request is returned.
 */
import { GatewayError } from '../errors.js';
import { checkDepth } from './depth.js';
import { parseKeepingNumbers } from './json-numbers.js';
import { shareContentJson } from './content-json.js';

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content?: string | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  refusal?: string | null;
}

/** A message as the schema lets it in, before normalisation. */
export interface ClientMessage extends Omit<ChatMessage, 'role' | 'content'> {
  role: Role | 'developer';
  content?: string | null | ContentPart[];
}

type ContentPart = { type: string; text?: string; refusal?: string };

/** Text parts joined, and (assistant turns) refusal parts joined apart. */
function joinParts(parts: ContentPart[], at: string, assistant: boolean): { text: string; refusal: string | null } {
  const text: string[] = [];
  const refusal: string[] = [];
  parts.forEach((p, k) => {
    if (p.type === 'text' && typeof p.text === 'string') text.push(p.text);
    else if (assistant && p.type === 'refusal' && typeof p.refusal === 'string') refusal.push(p.refusal);
    else if (p.type === 'text' || (assistant && p.type === 'refusal')) {
      // The right kind of part, without its string: say so, not that the part is not text.
      const field = p.type === 'text' ? 'text' : 'refusal';
      throw new GatewayError('invalid-messages', `${at}.content[${k}].${field} is missing: a "${p.type}" part needs a string "${field}"`, {
        param: `${at}.content[${k}].${field}`,
      });
    } else {
      throw new GatewayError('invalid-messages', `${at}.content[${k}] is a "${p.type}" part; content is text only (no images, audio or files)`, {
        param: `${at}.content[${k}].type`,
      });
    }
  });
  return { text: text.join('\n'), refusal: refusal.length > 0 ? refusal.join('\n') : null };
}

/** JSON arguments re-serialised from their one parse; anything else (not JSON, or a bare number) as sent. */
export function canonicalArguments(args: string, at: string): string {
  const t = args.trimStart();
  if (!(t.startsWith('{') || t.startsWith('[') || t.startsWith('"'))) return args;
  let value: unknown;
  try {
    value = parseKeepingNumbers(args);
  } catch (err) {
    if (err instanceof SyntaxError) return args;
    // The reviver walks recursively: thousands of levels overflow the stack (a RangeError) where the plain
    // parse does not. Such JSON is past the bound: the plain parse measures it and refuses it.
    checkDepth(JSON.parse(args), at, at);
    throw err;
  }
  checkDepth(value, at, at);
  return JSON.stringify(value);
}

/** Message fields accepted and dropped (see above); the schema takes them, normalisation removes them. */
export const DROPPED_MESSAGE_FIELDS = ['annotations', 'provider_specific_fields', 'reasoning_content', 'thinking_blocks', 'function_call', 'audio'] as const;

function dropBookkeeping(m: ClientMessage, at: string): ClientMessage {
  const r = m as ClientMessage & Record<string, unknown>;
  if (r['function_call'] != null) {
    throw new GatewayError('legacy-functions-not-supported', `${at}.function_call: send tool_calls (OpenAI deprecated function_call in favour of tool calls)`, {
      param: `${at}.function_call`,
    });
  }
  if (r['audio'] != null) throw new GatewayError('audio-not-supported', `${at}.audio: the gateway takes text only`, { param: `${at}.audio` });
  if (!DROPPED_MESSAGE_FIELDS.some((f) => f in r)) return m;
  const copy: Record<string, unknown> = { ...r };
  for (const f of DROPPED_MESSAGE_FIELDS) delete copy[f];
  return copy as unknown as ClientMessage;
}

export function normaliseMessages(messages: readonly ClientMessage[]): ChatMessage[] {
  return messages.map((sent, i) => {
    const at = `messages[${i}]`;
    const m = dropBookkeeping(sent, at);
    const out: ChatMessage = { ...m, role: m.role === 'developer' ? 'system' : m.role } as ChatMessage;
    // The content's JSON text kept by the body's parse goes with the copy (used only while the content is the same string).
    shareContentJson(sent, out);
    if (Array.isArray(m.content)) {
      const joined = joinParts(m.content, at, m.role === 'assistant');
      // An assistant turn made only of refusal parts has no text content.
      out.content = joined.text === '' && joined.refusal !== null ? null : joined.text;
      if (joined.refusal !== null) out.refusal = [m.refusal, joined.refusal].filter((r) => typeof r === 'string').join('\n');
    }
    if (m.tool_calls) {
      out.tool_calls = m.tool_calls.map((tc, k) => ({
        ...tc,
        function: { ...tc.function, arguments: canonicalArguments(tc.function.arguments, `${at}.tool_calls[${k}].function.arguments`) },
      }));
    }
    return out;
  });
}
