/**
 * One upstream origin as the transport uses it: where a route's calls go, with its keep-alive pool and its
 * bounds. Compiled from the routes' config (src/config/compile.ts); read by forward.ts and targets.ts.
 */
import type { Pool } from 'undici';

export interface Origin {
  route: string;
  /** Base URL as configured (e.g. http://127.0.0.1:9000/v1) — never contains the key. */
  baseUrl: string;
  /** Path of the chat-completions endpoint on the origin (e.g. /v1/chat/completions). */
  chatPath: string;
  demo: boolean;
  pool: Pool;
  /** Authorization header value, or null. Held only here; never logged. */
  authorization: string | null;
  /** The largest answer body read from this origin (`limits.upstreamAnswerBytes`). */
  maxAnswerBytes: number;
  /**
   * The cold-start budget (`routes.<name>.coldStartMs`): for this long after a call's first attempt, an
   * attempt that never reached the origin (connection refused or not opened: it is still starting) is
   * retried with backoff. Always below the synchronous wait, so a chat call sees the answer or the 502.
   */
  coldStartMs: number;
}
