/**
 * Resolving a bearer personal access token: checked for shape and checksum locally (a typo never costs a
 * store round trip), then resolved by its SHA-256 in one store call. On Redis that call is served from the
 * store's identity cache once the token has been seen (src/store/identity-cache.ts), and the cache never
 * outlives a change: Redis pushes an invalidation for every record it holds, and a read waits for a fence
 * that makes sure every push sent before the request arrived was applied. So a revocation written by any
 * gateway instance is seen by the very next request here, as before.
 *
 * What is remembered is which principal each recently seen token belongs to: a token never changes hands,
 * so this is a fact, not a cache of state (revocation, rung, scopes come from the store on every call).
 * It lets the chat path start a lookup that needs the principal id before the token's own lookup, so both
 * go to the store in one round trip (`knownPrincipal`, used by src/stages/look-ahead.ts). Bounded: the
 * oldest entry goes first.
 */
import { GatewayError } from '../errors.js';
import { hashToken, parseToken } from './pat.js';
import type { Identity, Store } from '../store/store.js';

const LEGACY_MESSAGE = 'legacy-token-revoked: legacy (v1) tokens were revoked together; issue a new personal access token in the account console';

const principalOfToken = new Map<string, string>();
const REMEMBERED_TOKENS = 10_000;

/** The principal a well-formed token seen before belongs to, without asking the store; undefined otherwise. */
export function knownPrincipal(token: string | null): string | undefined {
  // Only tokens that resolved are remembered, so a malformed one is simply not found.
  if (token === null || principalOfToken.size === 0) return undefined;
  return principalOfToken.get(hashToken(token));
}

/** Resolves a bearer token to its identity, or throws the 401 that says why not. */
export async function resolveToken(store: Store, token: string | null): Promise<Identity> {
  if (token === null) throw new GatewayError('unauthenticated');
  const format = parseToken(token);
  if (format === null) throw new GatewayError('invalid-token');
  const hash = hashToken(token);
  const known = principalOfToken.get(hash);
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
