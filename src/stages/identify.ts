/**
 * identify (admission step 1): who is calling. A Bearer personal access token is checked for shape and
 * checksum locally (a typo never costs a store round trip), then resolved by its SHA-256 in one store call.
 * Nothing is cached: a revocation written by any gateway instance is seen by the very next request here.
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';
import { hashToken, parseToken } from '../auth/pat.js';
import type { Identity, Store } from '../store/store.js';

const LEGACY_MESSAGE =
  'legacy-token-revoked: legacy (v1) tokens were revoked together; issue a new personal access token in the account console';

export function bearerToken(ctx: Context): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match ? match[1]! : null;
}

/** Resolves a bearer token to its identity, or throws the 401 that says why not. */
export async function resolveToken(store: Store, token: string | null): Promise<Identity> {
  if (token === null) throw new GatewayError('unauthenticated');
  const format = parseToken(token);
  if (format === null) throw new GatewayError('invalid-token');
  const identity = await store.identify(hashToken(token));
  if (!identity) throw new GatewayError('invalid-token');
  if (identity.token.format === 'v1' && identity.legacyRevoked) throw new GatewayError('token-revoked', LEGACY_MESSAGE);
  if (identity.token.revokedAt) {
    throw new GatewayError('token-revoked', identity.token.format === 'v1' ? LEGACY_MESSAGE : undefined);
  }
  return identity;
}

/** Koa stage. */
export function identify(store: Store) {
  return async function identify(ctx: Context, next: Next): Promise<void> {
    ctx.state.call.identity = await resolveToken(store, bearerToken(ctx));
    await next();
  };
}
