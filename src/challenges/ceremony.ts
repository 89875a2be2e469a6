/**
 * A request's challenges, given back when the store fails it half-way. `take` spends a challenge for good,
 * which is right when the caller's attempt failed (a bad signature has used its nonce up), but not when the
 * store did: a wallet sign-in whose nonce was taken and whose principal read then met an outage (a restarted
 * Redis answers one connection before the identity cache's is back) would leave the caller's signed message
 * spent with nothing to show for it, breaking "a failed request leaves nothing half-done".
 *
 * So a handler takes through `requestChallenges(ctx, store)`, which notes on the request what it took, and
 * `putBackOnOutage` (inside the single exit, so it sees the store's own error) puts those challenges back,
 * unchanged, when the request ends in an outage. Only then: any other failure keeps them spent. A challenge
 * whose end has passed, or that Redis cannot take back either, stays gone: the caller starts the ceremony
 * again, as after any expiry. A request that takes nothing pays nothing: the note is made on the first take.
 */
import type { Context, Next } from 'koa';
import { isStoreOutage } from '../store/errors.js';
import type { ChallengeStore, StoredChallenge } from './store.js';

interface Taken {
  kind: string;
  key: string;
  challenge: StoredChallenge;
}

const TAKEN = Symbol('challenges taken by this request');
type WithTaken = { [TAKEN]?: Taken[] };

/** The challenge store as one request uses it: what it takes is remembered until the request ends. */
export function requestChallenges(ctx: Context, store: ChallengeStore): ChallengeStore {
  return {
    put: (kind, key, challenge, now) => store.put(kind, key, challenge, now),
    async take<T>(kind: string, key: string, now: number): Promise<StoredChallenge<T> | null> {
      const challenge = await store.take<T>(kind, key, now);
      if (challenge) ((ctx.state as WithTaken)[TAKEN] ??= []).push({ kind, key, challenge: challenge as StoredChallenge });
      return challenge;
    },
  };
}

/** Puts back what a request took when it failed on the store; the request's answer is unchanged (503). */
export function putBackOnOutage(store: ChallengeStore, now: () => number) {
  return async function putBackOnOutage(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (err) {
      const taken = (ctx.state as WithTaken)[TAKEN];
      if (taken && isStoreOutage(err)) {
        const at = now();
        for (const { kind, key, challenge } of taken) {
          if (at >= challenge.expiresAt) continue;
          // Best effort: with the store still down the put fails too, and the challenge stays spent.
          await store.put(kind, key, challenge, at).catch(() => false);
        }
      }
      throw err;
    }
  };
}
