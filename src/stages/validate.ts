/**
 * validate: the request's shape (chat-schema.ts) and the spec's limits, against the named model's ceilings
 * from the catalog (or, for a model the catalog lacks, the largest ceilings any model has, so the answer for
 * an unknown model is still `model-not-found` from admission and not a limit error).
 *
 * Conversation rules: content is a string (no images, audio or attachments); one leading system turn only;
 * tool results are role `tool` with `tool_call_id`; an assistant turn has content or tool calls.
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';
import type { ModelLimits } from '../config/types.js';
import type { Runtime } from '../config/compile.js';
import { DROPPED_PARAMETERS, fieldPath, validateChatShape, validateJobShape } from './chat-schema.js';
import type { ValidateFunction } from 'ajv';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  name?: string;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  refusal?: string | null;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number;
  max_completion_tokens?: number;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: object; strict?: boolean | null } }>;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  stream?: boolean;
  task?: string;
}

/** The validated call: what admission and forwarding need, nothing dropped that matters. */
export interface ValidCall {
  request: ChatRequest;
  maxTokens: number;
  task: string;
  stream: boolean;
  inputChars: number;
}

function widestLimits(runtime: Runtime): ModelLimits {
  const all = runtime.modelList.map((m) => m.limits);
  return {
    inputChars: Math.max(...all.map((l) => l.inputChars)),
    outputTokens: Math.max(...all.map((l) => l.outputTokens)),
    tools: Math.max(...all.map((l) => l.tools)),
    turns: Math.max(...all.map((l) => l.turns)),
  };
}

/** Characters of input the model reads: message contents, tool-call arguments, and tool definitions. */
export function countInputChars(req: ChatRequest): number {
  let n = 0;
  for (const m of req.messages) {
    n += m.content?.length ?? 0;
    for (const c of m.tool_calls ?? []) n += c.function.name.length + c.function.arguments.length;
  }
  if (req.tools) n += JSON.stringify(req.tools).length;
  return n;
}

function checkConversation(messages: ChatMessage[]): void {
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (m.role === 'system' && i !== 0) throw new GatewayError('invalid-messages', `${at}: only one system turn is allowed, and only first`);
    if (m.role === 'assistant') {
      if ((m.content === null || m.content === undefined) && !m.tool_calls?.length) {
        throw new GatewayError('invalid-messages', `${at}: an assistant turn needs content or tool_calls`);
      }
    } else {
      if (typeof m.content !== 'string') throw new GatewayError('invalid-messages', `${at}.content must be a string (no images, audio or attachments)`);
      if (m.tool_calls) throw new GatewayError('invalid-messages', `${at}: only assistant turns carry tool_calls`);
    }
    if (m.role === 'tool' && !m.tool_call_id) throw new GatewayError('invalid-messages', `${at}: a tool result needs tool_call_id`);
    if (m.role !== 'tool' && m.tool_call_id !== undefined) throw new GatewayError('invalid-messages', `${at}: only tool turns carry tool_call_id`);
  });
}

/** The first schema error as the client would name it. */
function shapeError(validateShape: ValidateFunction): GatewayError {
  const e = validateShape.errors![0]!;
  const field = fieldPath(e.instancePath);
  if (e.keyword === 'additionalProperties') {
    const key = (e.params as { additionalProperty: string }).additionalProperty;
    const hint = key === 'response_format' ? ' (strict JSON output is obtained through a tool call)' : '';
    return new GatewayError('invalid-request', `${field ? `${field}: ` : ''}unknown field "${key}"${hint}`);
  }
  return new GatewayError('invalid-request', `${field || 'body'} ${e.message ?? 'is invalid'}`);
}

/** The strict jobs body: its own shape, then every chat rule and limit. */
export function validateJob(body: unknown, runtime: Runtime): ValidCall & { scopeId: string } {
  if (!validateJobShape(body)) throw shapeError(validateJobShape);
  const { scopeId, ...chat } = body as { scopeId: string } & ChatRequest;
  return { ...validateChat(chat, runtime), scopeId };
}

/** Validates a parsed body against the runtime; pure, so the jobs path can share it. */
export function validateChat(body: unknown, runtime: Runtime): ValidCall {
  if (!validateChatShape(body)) throw shapeError(validateChatShape);
  const req = body as ChatRequest;
  const limits = runtime.models.get(req.model)?.limits ?? widestLimits(runtime);
  if (req.messages.length > limits.turns) throw new GatewayError('too-many-turns', `at most ${limits.turns} turns; got ${req.messages.length}`);
  if ((req.tools?.length ?? 0) > limits.tools) throw new GatewayError('too-many-tools', `at most ${limits.tools} tools; got ${req.tools!.length}`);
  checkConversation(req.messages);
  const requested = req.max_completion_tokens ?? req.max_tokens;
  if (req.max_tokens !== undefined && req.max_completion_tokens !== undefined && req.max_tokens !== req.max_completion_tokens) {
    throw new GatewayError('invalid-request', 'max_tokens and max_completion_tokens disagree; send one');
  }
  if (requested !== undefined && requested > limits.outputTokens) {
    throw new GatewayError('max-tokens-out-of-range', `max_tokens must be at most ${limits.outputTokens} (reasoning included); got ${requested}`);
  }
  const inputChars = countInputChars(req);
  if (inputChars > limits.inputChars) {
    throw new GatewayError('input-too-large', `input is ${inputChars} characters, tool definitions included; the limit is ${limits.inputChars}`);
  }
  const task = req.task ?? runtime.defaultTask;
  if (!runtime.tasks[task]) throw new GatewayError('invalid-request', `unknown task "${task}"; tasks are ${Object.keys(runtime.tasks).join(', ')}`);
  return {
    request: req,
    maxTokens: Math.min(requested ?? runtime.gateway.limits.defaultMaxTokens, limits.outputTokens),
    task,
    stream: req.stream === true,
    inputChars,
  };
}

/** The body sent upstream: the upstream's model id, sampling parameters and gateway fields dropped. */
export function upstreamBody(call: ValidCall, upstreamModel: string, messages: ChatMessage[], tools: ChatRequest['tools']): Record<string, unknown> {
  const { request } = call;
  const body: Record<string, unknown> = { model: upstreamModel, messages, max_tokens: call.maxTokens, stream: false };
  if (tools) body['tools'] = tools;
  if (request.tool_choice !== undefined) body['tool_choice'] = request.tool_choice;
  if (request.parallel_tool_calls !== undefined) body['parallel_tool_calls'] = request.parallel_tool_calls;
  return body;
}

export { DROPPED_PARAMETERS };

/** Koa stage: `chat` for POST /v1/chat/completions, `job` for the strict body of POST /v1/research/jobs. */
export function validate(kind: 'chat' | 'job' = 'chat') {
  return async function validate(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call;
    const valid = kind === 'job' ? validateJob(call.body, call.runtime) : validateChat(call.body, call.runtime);
    call.valid = valid;
    call.task = valid.task;
    call.scopeId = 'scopeId' in valid ? valid.scopeId : null;
    await next();
  };
}
