/**
 * Forwarding one chat call to an upstream origin over its undici pool (keep-alive; connect, headers and body
 * timeouts from config). The upstream is asked for a non-streaming answer — streaming is emulated by the
 * gateway on the finished answer — and its reply is read into a normalised answer. Failures are typed:
 * unreachable once the route's cold-start budget is spent (502 `upstream-unavailable`), a non-2xx or malformed reply (502 `upstream-error`), a timeout
 * (504 `upstream-timeout`). Error messages carry status codes, never the upstream's body, which may echo
 * the prompt or the key.
 *
 * Two bounds on what an upstream can make us do: an answer larger than
 * `limits.upstreamAnswerBytes` is cut off while it is read (the pool's `maxResponseSize`; a declared
 * content-length over it is refused before a byte of the body is read) and answered 502
 * `upstream-answer-too-large`; and usage that is not a count of tokens (missing, negative, fractional, a
 * string, above 2^53) is a malformed answer, 502 `upstream-usage-malformed`, which the failure path charges
 * at the worst case reserved: the upstream ran and we cannot tell for how much, so the bound the principal
 * agreed to is charged rather than nothing (failing open would let a broken or hostile upstream serve free).
 */
import { errors as undiciErrors } from 'undici';
import { GatewayError } from '../errors.js';
import { upstreamPayload } from '../compat/forwarded.js';
import type { Origin } from '../config/compile.js';
import type { Usage } from '../metering/price.js';
import { metrics } from '../observe/metrics.js';
import { clientSpan } from '../observe/tracing.js';

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
    const finish = typeof choice?.['finish_reason'] === 'string' ? (choice['finish_reason']) : message.tool_calls ? 'tool_calls' : 'stop';
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

/** Errors raised before a byte of the request reached the upstream: the only ones safe to retry. */
function notStarted(err: unknown): boolean {
  const code = (err as { code?: string } | undefined)?.code;
  return err instanceof undiciErrors.ConnectTimeoutError || code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH';
}

/** Backoff between attempts that never reached the origin: 100 ms, doubling, at most 5 s apart. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/**
 * Forwards, retrying only an attempt known not to have started (the connection was refused or never
 * opened), so an upstream never runs the same call twice. Such an attempt is retried with backoff while the
 * route's cold-start budget (`origin.coldStartMs`, counted from the first attempt) lasts — an origin that is
 * still starting is waited for, not failed in half a second — and at least `retries` times; then the last
 * failure stands (502 `upstream-unavailable`).
 */
export async function forwardChat(origin: Origin, body: Record<string, unknown>, signal: AbortSignal, retries = 0): Promise<UpstreamAnswer> {
  // Serialised once for every attempt; the bytes of JSON.stringify(body) (src/compat/forwarded.ts).
  const payload = upstreamPayload(body);
  const budgetEnds = Date.now() + origin.coldStartMs;
  for (let attempt = 0; ; attempt++) {
    const end = metrics.upstreamSeconds.startTimer({ route: origin.route });
    try {
      const answer = await forwardOnce(origin, payload, signal);
      end();
      return answer;
    } catch (err) {
      end();
      metrics.upstreamErrors.inc({ route: origin.route, code: err instanceof GatewayError ? err.code : 'internal-error' });
      const cause = (err as { cause?: unknown }).cause;
      if (!notStarted(cause) || signal.aborted) throw err;
      const pause = Math.min(FIRST_RETRY_MS * 2 ** attempt, MAX_RETRY_MS);
      if (attempt >= retries && Date.now() + pause > budgetEnds) throw err;
      await pauseUnlessAborted(pause, signal);
      if (signal.aborted) throw err;
    }
  }
}

/** Waits `ms`, or less when `signal` aborts (the job ran out of time or the gateway stops). */
function pauseUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

function tooLarge(origin: Origin): GatewayError {
  return new GatewayError('upstream-answer-too-large', `the upstream of route ${origin.route} answered more than ${origin.maxAnswerBytes} bytes`);
}

async function forwardOnce(origin: Origin, body: string | Buffer, signal: AbortSignal): Promise<UpstreamAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (origin.authorization) headers['authorization'] = origin.authorization;
  // The upstream call is a client span when tracing is on; its traceparent goes upstream in `headers`.
  return clientSpan(origin.route, headers, () => forwardTraced(origin, body, signal, headers));
}

async function forwardTraced(origin: Origin, body: string | Buffer, signal: AbortSignal, headers: Record<string, string>): Promise<UpstreamAnswer> {
  let statusCode: number;
  let json: unknown;
  try {
    const res = await origin.pool.request({ method: 'POST', path: origin.chatPath, headers, body, signal });
    statusCode = res.statusCode;
    if (statusCode < 200 || statusCode > 299) {
      await res.body.dump();
      // The status rides as the cause, so a route may fail over on the origin's own 502/503/504 (route.ts).
      throw new GatewayError('upstream-error', `the upstream of route ${origin.route} answered ${statusCode}`, { cause: { upstreamStatus: statusCode } });
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > origin.maxAnswerBytes) {
      // Closing the body without reading it: the pool drops the connection rather than drain 300 MiB.
      res.body.destroy();
      throw tooLarge(origin);
    }
    try {
      json = await res.body.json();
    } catch (err) {
      if (err instanceof undiciErrors.ResponseExceededMaxSizeError) throw tooLarge(origin);
      if (err instanceof undiciErrors.BodyTimeoutError) throw err;
      throw new GatewayError('upstream-error', `the upstream of route ${origin.route} answered with a body that is not JSON`);
    }
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
      throw new GatewayError('upstream-timeout', `the upstream of route ${origin.route} did not answer in time`);
    }
    if (err instanceof undiciErrors.ConnectTimeoutError) {
      throw new GatewayError('upstream-unavailable', `the upstream of route ${origin.route} did not accept a connection in time`, { cause: err });
    }
    if (err instanceof undiciErrors.RequestAbortedError || (err as Error).name === 'AbortError') {
      throw new GatewayError('upstream-error', 'the call was cancelled before the upstream answered');
    }
    throw new GatewayError('upstream-unavailable', `the upstream of route ${origin.route} could not be reached`, { cause: err });
  }
  return normaliseAnswer(json);
}
