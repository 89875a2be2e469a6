/**
 * The transport of one chat call to an upstream origin over its undici pool (keep-alive; connect, headers
 * and body timeouts from config): the serialised body out, the reply's JSON in, handed to `read` (the
 * OpenAI reading of it is src/openai/answer.ts). The upstream is asked for a non-streaming answer —
 * streaming is emulated by the gateway on the finished answer. Failures are typed: unreachable once the
 * route's cold-start budget is spent (502 `upstream-unavailable`), a non-2xx reply or one that is not JSON
 * (502 `upstream-error`), a timeout (504 `upstream-timeout`). Error messages carry status codes, never the
 * upstream's body, which may echo the prompt or the key.
 *
 * An answer larger than `limits.upstreamAnswerBytes` is cut off while it is read (the pool's
 * `maxResponseSize`; a declared content-length over it is refused before a byte of the body is read) and
 * answered 502 `upstream-answer-too-large`.
 */
import { errors as undiciErrors } from 'undici';
import { GatewayError } from '../errors.js';
import type { Origin } from './origin.js';
import { metrics } from '../observe/metrics.js';
import { clientSpan, tracingOn } from '../observe/tracing.js';

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
export async function forwardChat<T>(origin: Origin, payload: string | Buffer, read: (json: unknown) => T, signal: AbortSignal, retries = 0): Promise<T> {
  const budgetEnds = Date.now() + origin.coldStartMs;
  // The route's child of the histogram, counted without a timer closure (src/observe/folded-histogram.ts).
  const latency = metrics.upstreamSeconds.child(origin.route, { route: origin.route });
  for (let attempt = 0; ; attempt++) {
    const started = performance.now();
    try {
      const answer = await forwardOnce(origin, payload, read, signal);
      latency.observe((performance.now() - started) / 1000);
      return answer;
    } catch (err) {
      latency.observe((performance.now() - started) / 1000);
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

async function forwardOnce<T>(origin: Origin, body: string | Buffer, read: (json: unknown) => T, signal: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (origin.authorization) headers['authorization'] = origin.authorization;
  // The upstream call is a client span when tracing is on; its traceparent goes upstream in `headers`.
  // Off, there is no span to make (and no closure to make it with).
  if (!tracingOn()) return read(await forwardTraced(origin, body, signal, headers));
  return clientSpan(origin.route, headers, async () => read(await forwardTraced(origin, body, signal, headers)));
}

async function forwardTraced(origin: Origin, body: string | Buffer, signal: AbortSignal, headers: Record<string, string>): Promise<unknown> {
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
  return json;
}
