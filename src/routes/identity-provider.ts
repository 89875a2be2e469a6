/**
 * Linking an OpenID Connect identity to the signed-in account (auth host, `cookie`):
 *
 *   POST /v1/account/identity-provider/start     {}  -> {url}: the provider's authorization URL
 *   GET  /v1/account/identity-provider/callback  ?code&state (the provider sends the browser back here)
 *        -> 303 to {console_url}/#security, the link made
 *
 * The link names the account; the account's own method proves it: both steps need the session of a
 * principal signed in with a passkey or wallet, and the callback must come with the session that started
 * it (the state is bound to its principal, used once, for 10 minutes). openid-client checks the code
 * exchange (PKCE), the state, the nonce and the ID token, and reads the name and e-mail from the userinfo
 * endpoint for the ID token's subject. The identity then names this principal — unless it
 * already names another (409 `identity-linked-elsewhere`). It is never a way to sign in.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import { resolveCaller, SESSION_ONLY } from '../auth/caller.js';
import { jsonBody } from '../auth/schemas.js';
import type { Deps } from '../app/deps.js';
import { requestChallenges } from '../challenges/ceremony.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type IdentityProviderDeps = Pick<Deps, 'challenges' | 'holder' | 'identityLinks' | 'now' | 'oidc' | 'origins' | 'sessions' | 'store'>;

const KIND = 'oidc-link';
const TTL_MS = 10 * 60_000;

interface Pending {
  principalId: string;
  verifier: string;
  nonce: string;
}

function provider(deps: IdentityProviderDeps) {
  if (!deps.oidc) throw new GatewayError('identity-provider-not-configured');
  return deps.oidc;
}

const redirectUri = (deps: IdentityProviderDeps) => `${deps.origins.auth}/v1/account/identity-provider/callback`;

export function identityProviderStart(deps: IdentityProviderDeps) {
  return async function identityProviderStart(ctx: Context): Promise<void> {
    const { principal } = await resolveCaller(ctx, deps, SESSION_ONLY);
    await jsonBody(ctx, deps.holder.current.gateway.limits.bodyBytes, 'empty');
    const config = await provider(deps).configuration();
    const client = await import('openid-client');
    const state = client.randomState();
    const nonce = client.randomNonce();
    const verifier = client.randomPKCECodeVerifier();
    const data: Pending = { principalId: principal.id, verifier, nonce };
    await deps.challenges.put(KIND, state, { data: data as unknown as Record<string, unknown>, expiresAt: deps.now() + TTL_MS }, deps.now());
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri(deps),
      scope: 'openid email profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    ctx.set('cache-control', 'no-store');
    ctx.body = { url: url.href };
  };
}

export function identityProviderCallback(deps: IdentityProviderDeps) {
  return async function identityProviderCallback(ctx: Context): Promise<void> {
    const { principal } = await resolveCaller(ctx, deps, SESSION_ONLY);
    const oidc = provider(deps);
    const state = typeof ctx.query['state'] === 'string' ? ctx.query['state'] : '';
    const held = state ? await requestChallenges(ctx, deps.challenges).take<Pending>(KIND, state, deps.now()) : null;
    // Another session's state, or none: this browser did not start this link.
    if (!held || held.data.principalId !== principal.id) throw new GatewayError('challenge-invalid');
    const config = await oidc.configuration();
    const client = await import('openid-client');
    let claims: Record<string, unknown> | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(config, new URL(`${redirectUri(deps)}${ctx.search}`), {
        pkceCodeVerifier: held.data.verifier,
        expectedState: state,
        expectedNonce: held.data.nonce,
        idTokenExpected: true,
      });
      claims = tokens.claims();
      // The ID token proves who; the name and e-mail come from the userinfo endpoint, for that subject only.
      if (claims && typeof claims['sub'] === 'string') {
        const info = await client.fetchUserInfo(config, tokens.access_token, claims['sub']);
        claims = { ...info, ...claims };
      }
    } catch (err) {
      throw new GatewayError('identity-provider-rejected', undefined, { cause: err });
    }
    if (!claims || typeof claims['sub'] !== 'string' || typeof claims['iss'] !== 'string') throw new GatewayError('identity-provider-rejected');
    const str = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 256 ? v : null);
    const email = claims['email_verified'] === true ? str(claims['email']) : null;
    const owner = await deps.identityLinks.link(principal.id, {
      issuer: claims['iss'],
      subject: claims['sub'],
      name: str(claims['preferred_username']) ?? str(claims['name']) ?? email,
      email,
      linkedAt: new Date(deps.now()).toISOString(),
    });
    if (owner !== principal.id) throw new GatewayError('identity-linked-elsewhere');
    ctx.set('cache-control', 'no-store');
    ctx.status = 303;
    ctx.redirect(`${deps.origins.console}/#security`);
  };
}
