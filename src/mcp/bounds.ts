/**
 * What an MCP host refuses before the SDK sees a message, answered as JSON-RPC errors:
 *
 *   - a batch (a JSON array of messages): -32600 Invalid Request, HTTP 400. The 2025-06-18 revision of MCP
 *     removed JSON-RPC batching; accepting it let one request carry a hundred tool calls past every
 *     per-request limit.
 *   - a message nesting deeper than the API host reads (compat/depth.ts, 64 levels of arguments plus the
 *     envelope's own): -32602 Invalid params, with `data.code` `nesting-too-deep`. Measured iteratively,
 *     so 50,000 levels cost a loop, not the stack (they used to answer -32603 "Maximum call stack size
 *     exceeded" from deep inside the SDK).
 */
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { jsonDepth, MAX_DEPTH } from '../compat/depth.js';

/** `{"jsonrpc","method","params":{"name","arguments":<64 levels>}}`: the envelope adds three levels. */
const ENVELOPE_DEPTH = 3;

export interface Refusal {
  status: number;
  body: { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };
}

/** The id of a request, when it has a usable one (a refusal answers to it). */
function idOf(message: unknown): string | number | null {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

export function boundsRefusal(message: unknown): Refusal | null {
  if (Array.isArray(message)) {
    return {
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: null,
        error: { code: ErrorCode.InvalidRequest, message: 'JSON-RPC batches are not accepted (MCP 2025-06-18 removed batching): send one message per request' },
      },
    };
  }
  const limit = MAX_DEPTH + ENVELOPE_DEPTH;
  if (jsonDepth(message, limit) > limit) {
    return {
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: idOf(message),
        error: { code: ErrorCode.InvalidParams, message: `the arguments nest JSON deeper than ${MAX_DEPTH} levels`, data: { code: 'nesting-too-deep' } },
      },
    };
  }
  return null;
}
