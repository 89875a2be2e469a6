/**
 * An OpenAI chat-completion request in (and the strict body of the jobs API): the nesting bound, the
 * parameter table (src/compat/parameters.ts), the request's shape (chat-schema.ts), messages normalised as
 * clients send them (src/compat/messages.ts), and the spec's limits, against the named model's ceilings
 * from the catalog (or, for a model the catalog lacks, the largest ceilings any model has, so the answer for
 * an unknown model is still `model-not-found` from admission and not a limit error).
 *
 * The input limit counts every forwarded string (src/compat/forwarded.ts), not only message contents.
 *
 * Conversation rules: content is text (no images, audio or attachments); one leading system turn only;
 * tool results are role `tool` with `tool_call_id`, which names a call an earlier assistant turn made (400
 * `unknown-tool-call-id`, as OpenAI refuses a tool result that answers no call); an assistant turn has
 * content, tool calls or a refusal. A `tool_choice` naming a function names one of `tools` (400
 * `unknown-tool-choice`). Neither message repeats the id or name: ids are never scanned, and either could
 * be a pasted secret.
 */
import { GatewayError } from '../errors.js';
import type { ModelLimits } from '../config/types.js';
import type { Runtime } from '../config/compile.js';
import { validateChatShape, validateJobShape } from './chat-schema.js';
import { fieldPath } from '../http/field-path.js';
import type { ValidateFunction } from 'ajv';
import { checkParameters, PARAMETER_NAME } from '../compat/parameters.js';
import { checkDepth } from '../compat/depth.js';
import { normaliseMessages, type ChatMessage, type ClientMessage } from '../compat/messages.js';
import { forwardedChars, inputTokenBound, upstreamBody } from '../compat/forwarded.js';

export type { ChatMessage };

/** The request after validation: messages normalised (src/compat/messages.ts), the fields the gateway uses. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: object; strict?: boolean | null } }>;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  seed?: number | null;
  task?: string;
}

/** The validated call: what admission and forwarding need, nothing dropped that matters. */
export interface ValidCall {
  request: ChatRequest;
  maxTokens: number;
  task: string;
  stream: boolean;
  /** `stream_options.include_usage`: a usage chunk (empty choices) before `[DONE]`, as OpenAI sends it. */
  includeUsage: boolean;
  inputChars: number;
  /** A true upper bound on the input tokens (src/compat/forwarded.ts inputTokenBound): what the reservation holds. */
  inputTokens: number;
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

function checkConversation(messages: ChatMessage[]): void {
  // The ids of the calls made so far: a tool result answers one of them.
  const called = new Set<string>();
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    if (m.role === 'system' && i !== 0)
      throw new GatewayError('invalid-messages', `${at}: only one system (or developer) turn is allowed, and only first`, { param: `${at}.role` });
    if (m.role === 'assistant') {
      if ((m.content === null || m.content === undefined) && !m.tool_calls?.length && typeof m.refusal !== 'string') {
        throw new GatewayError('invalid-messages', `${at}: an assistant turn needs content, tool_calls or a refusal`, { param: `${at}.content` });
      }
    } else {
      if (typeof m.content !== 'string')
        throw new GatewayError('invalid-messages', `${at}.content must be a string or text parts (no images, audio or attachments)`, {
          param: `${at}.content`,
        });
      if (m.tool_calls) throw new GatewayError('invalid-messages', `${at}: only assistant turns carry tool_calls`, { param: `${at}.tool_calls` });
    }
    if (m.role === 'tool' && !m.tool_call_id)
      throw new GatewayError('invalid-messages', `${at}: a tool result needs tool_call_id`, { param: `${at}.tool_call_id` });
    if (m.role !== 'tool' && m.tool_call_id !== undefined)
      throw new GatewayError('invalid-messages', `${at}: only tool turns carry tool_call_id`, { param: `${at}.tool_call_id` });
    if (m.role === 'tool' && !called.has(m.tool_call_id!)) {
      throw new GatewayError('unknown-tool-call-id', `${at}.tool_call_id names no call of an earlier assistant turn's tool_calls`, {
        param: `${at}.tool_call_id`,
      });
    }
    for (const tc of m.tool_calls ?? []) called.add(tc.id);
  });
}

/** A tool_choice naming a function must name one of the request's tools. */
function checkToolChoice(req: ChatRequest): void {
  const choice = req.tool_choice as { function?: { name?: unknown } } | string | null | undefined;
  if (choice === null || typeof choice !== 'object') return;
  const name = choice.function?.name;
  if (!(req.tools ?? []).some((t) => t.function.name === name)) {
    throw new GatewayError('unknown-tool-choice', 'tool_choice.function.name names no function of tools', { param: 'tool_choice.function.name' });
  }
}

/** The first schema error as the client would name it (and as `param`, where OpenAI clients read it). */
function shapeError(validateShape: ValidateFunction): GatewayError {
  const e = validateShape.errors![0]!;
  const field = fieldPath(e.instancePath);
  if (e.keyword === 'additionalProperties') {
    const key = (e.params as { additionalProperty: string }).additionalProperty;
    // A key is repeated back only when it looks like a field name: it could be a pasted secret.
    if (!PARAMETER_NAME.test(key)) return new GatewayError('invalid-request', `${field ? `${field}: ` : ''}an unknown field`, field ? { param: field } : {});
    const param = field ? `${field}.${key}` : key;
    return new GatewayError('invalid-request', `${field ? `${field}: ` : ''}unknown field "${key}"`, { param });
  }
  if (e.keyword === 'required') {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return new GatewayError('invalid-request', `${field ? `${field}.` : ''}${missing} is required`, { param: field ? `${field}.${missing}` : missing });
  }
  return new GatewayError('invalid-request', `${field || 'body'} ${e.message ?? 'is invalid'}`, field ? { param: field } : {});
}

/**
 * The strict jobs body: its own shape, then every chat rule and limit. `scopeId` absent, null or "" all mean
 * no scope named; that is refused (400, param scopeId) only for a model whose team requires a scope — the
 * red team — and otherwise the job is admitted as the chat path admits the call. A named scope is checked
 * by admission on every team (403 `scope-not-approved` when it is not one of the principal's).
 */
export function validateJob(body: unknown, runtime: Runtime): ValidCall & { scopeId: string | null } {
  checkDepth(body, 'the body');
  if (!validateJobShape(body)) throw shapeError(validateJobShape);
  const { scopeId, ...chat } = body as { scopeId?: string | null } & ChatRequest;
  const valid = validateChat(chat, runtime);
  const named = scopeId ? scopeId : null;
  const model = runtime.models.get(valid.request.model);
  // An unknown model is left to admission (404 model-not-found); a known team without rules fails closed.
  if (named === null && model && runtime.teams[model.team]?.requiresScope !== false) {
    throw new GatewayError(
      'invalid-request',
      `scopeId is required for model ${model.id}: its team (${model.team}) runs only under an approved research scope`,
      {
        param: 'scopeId',
      },
    );
  }
  return { ...valid, scopeId: named };
}

/** Validates a parsed body against the runtime; pure, so the jobs path can share it. */
export function validateChat(body: unknown, runtime: Runtime): ValidCall {
  // Depth first: everything after it walks the body recursively.
  checkDepth(body, 'the body');
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) checkParameters(body as Record<string, unknown>);
  if (!validateChatShape(body)) throw shapeError(validateChatShape);
  const client = body as Omit<ChatRequest, 'messages'> & { messages: ClientMessage[] };
  const req: ChatRequest = { ...client, messages: normaliseMessages(client.messages) };
  const limits = runtime.models.get(req.model)?.limits ?? widestLimits(runtime);
  if (req.messages.length > limits.turns)
    throw new GatewayError('too-many-turns', `at most ${limits.turns} turns; got ${req.messages.length}`, { param: 'messages' });
  if ((req.tools?.length ?? 0) > limits.tools)
    throw new GatewayError('too-many-tools', `at most ${limits.tools} tools; got ${req.tools!.length}`, { param: 'tools' });
  checkConversation(req.messages);
  checkToolChoice(req);
  const requested = req.max_completion_tokens ?? req.max_tokens ?? undefined;
  if (req.max_tokens != null && req.max_completion_tokens != null && req.max_tokens !== req.max_completion_tokens) {
    throw new GatewayError('invalid-request', 'max_tokens and max_completion_tokens disagree; send one', { param: 'max_completion_tokens' });
  }
  if (requested !== undefined && requested > limits.outputTokens) {
    throw new GatewayError('max-tokens-out-of-range', `max_tokens must be at most ${limits.outputTokens} (reasoning included); got ${requested}`, {
      param: req.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens',
    });
  }
  const inputChars = forwardedChars(req);
  if (inputChars > limits.inputChars) {
    throw new GatewayError('input-too-large', `input is ${inputChars} characters, tool definitions included; the limit is ${limits.inputChars}`, {
      param: 'messages',
    });
  }
  const task = req.task ?? runtime.defaultTask;
  if (!runtime.tasks[task]) {
    const shown = /^[a-z][a-z0-9-]{0,63}$/.test(task) ? `unknown task "${task}"` : 'unknown task';
    throw new GatewayError('invalid-request', `${shown}; tasks are ${Object.keys(runtime.tasks).join(', ')}`, { param: 'task' });
  }
  return {
    request: req,
    maxTokens: Math.min(requested ?? runtime.gateway.limits.defaultMaxTokens, limits.outputTokens),
    task,
    stream: req.stream === true,
    includeUsage: req.stream === true && req.stream_options?.include_usage === true,
    inputChars,
    inputTokens: inputTokenBound(req),
  };
}

/**
 * The body the upstream gets for a validated request (redacted or not): the route's own model id, the
 * output bound the call reserved for, the sampling parameters dropped (src/compat/forwarded.ts).
 */
export function upstreamRequest(request: ChatRequest, maxTokens: number, upstreamModel: string): Record<string, unknown> {
  return upstreamBody({ ...request, max_tokens: maxTokens }, upstreamModel);
}
