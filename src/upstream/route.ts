/**
 * Forwarding one call over a route with several origins: try the origins in the route's order
 * (src/upstream/targets.ts), and fail over to the next only when the one tried did not run the call — it
 * could not be reached (502 `upstream-unavailable`) or answered 502, 503 or 504 itself — so an upstream
 * never runs the same call twice. Each outcome feeds the route's passive ejection. A timeout or an answer
 * that was read is never failed over: the origin may have done the work.
 *
 * Each origin is asked through forwardChat (src/upstream/forward.ts) with its own bounded retries on
 * refused connections; failover happens after those.
 */
import { GatewayError } from '../errors.js';
import { upstreamMetrics } from '../observe/metrics.js';
import { forwardChat } from './forward.js';
import type { RouteUpstream, Target } from './targets.js';

export interface RoutedAnswer<T> {
  answer: T;
  /** The origin that answered. */
  target: Target;
}

/** True when the origin did not run the call, so another may: unreachable, or its own 502/503/504. */
export function mayFailOver(err: unknown): boolean {
  if (!(err instanceof GatewayError)) return false;
  if (err.code === 'upstream-unavailable') return true;
  const status = (err.cause as { upstreamStatus?: number } | undefined)?.upstreamStatus;
  return err.code === 'upstream-error' && (status === 502 || status === 503 || status === 504);
}

/** `payload` is the serialised upstream body; `read` turns the reply's JSON into the answer (a throw there is the origin's failure). */
export async function forwardRoute<T>(
  upstream: RouteUpstream,
  payload: string | Buffer,
  read: (json: unknown) => T,
  signal: AbortSignal,
  retries = 0,
): Promise<RoutedAnswer<T>> {
  const order = upstream.order();
  let last: unknown;
  for (const [i, target] of order.entries()) {
    try {
      const answer = await forwardChat(target.origin, payload, read, signal, retries);
      upstream.report(target, true);
      upstreamMetrics.answers.inc({ route: upstream.route, origin: target.name });
      return { answer, target };
    } catch (err) {
      last = err;
      const failOver = mayFailOver(err);
      if (failOver) upstream.report(target, false);
      if (!failOver || signal.aborted || i === order.length - 1) throw err;
      upstreamMetrics.failovers.inc({ route: upstream.route, origin: target.name });
    }
  }
  if (last !== undefined) throw last as Error;
  throw new GatewayError('upstream-unavailable', `route ${upstream.route} has no origin`);
}
