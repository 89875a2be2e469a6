/**
 * A bearer personal access token on a request: read from the Authorization header, checked for shape and
 * checksum locally (a typo never costs a store round trip), then resolved by its SHA-256 in one store call.
 * Both sign-in seams use it: the caller rules (caller.ts) and the MCP endpoint's admission (mcp/auth.ts).
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import { hashToken, parseToken } from './pat.js';
import type { Identity, Store } from '../store/store.js';

const LEGACY_MESSAGE = 'legacy-token-revoked: legacy (v1) tokens were revoked together; issue a new personal access token in the account console';

export function bearerToken(ctx: Context): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * Which principal each recently seen token belongs to: a token never changes hands, so this is a fact, not a
 * cache of state (revocation, rung, scopes are read from the store on every call). It lets a caller start a
 * lookup that needs the principal id in the same round trip as the token's (see stages/identify.ts). Bounded: the
 * oldest entry goes first.
 */
const principalOfToken = new Map<string, string>();
const REMEMBERED_TOKENS = 10_000;

/**
 * Resolves a bearer token to its identity, or throws the 401 that says why not. `alongside` is called with
 * the token's principal id, when it is known, just before the store is asked: a store call it makes there
 * goes out in the same write as the token lookup.
 */
export async function resolveToken(store: Store, token: string | null, alongside?: (principalId: string) => void): Promise<Identity> {
  if (token === null) throw new GatewayError('unauthenticated');
  const format = parseToken(token);
  if (format === null) throw new GatewayError('invalid-token');
  const hash = hashToken(token);
  const known = principalOfToken.get(hash);
  if (known !== undefined && alongside) alongside(known);
  const identity = await store.identify(hash);
  if (!identity) throw new GatewayError('invalid-token');
  if (known !== identity.principal.id) {
    // New here (or, with two stores in one process, another store's token of the same text).
    if (principalOfToken.size >= REMEMBERED_TOKENS) principalOfToken.delete(principalOfToken.keys().next().value!);
    principalOfToken.set(hash, identity.principal.id);
  }
  if (identity.token.format === 'v1' && identity.legacyRevoked) throw new GatewayError('token-revoked', LEGACY_MESSAGE);
  if (identity.token.revokedAt) {
    throw new GatewayError('token-revoked', identity.token.format === 'v1' ? LEGACY_MESSAGE : undefined);
  }
  return identity;
}
