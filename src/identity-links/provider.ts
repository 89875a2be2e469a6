/**
 * The OpenID Connect provider an account may be linked to, from the environment:
 * `PORTCULLIS_OIDC_ISSUER` (its issuer URL), `PORTCULLIS_OIDC_CLIENT_ID` and `PORTCULLIS_OIDC_CLIENT_SECRET`
 * (this gateway registered as a confidential client, redirect URI `{auth_url}/v1/account/identity-provider/callback`).
 * Without an issuer there is no provider and the link routes answer 503. The client is openid-client: it
 * discovers the provider (once, on first use, again after a failure), builds the authorization request
 * with PKCE, a state and a nonce, and checks the code exchange and the ID token.
 *
 * An issuer on plain http is accepted only on a loopback host (a provider on the same machine, as in the
 * tests); anywhere else it must be https.
 */
import type { Configuration } from 'openid-client';
import { GatewayError } from '../errors.js';

export interface OidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The discovered configuration; 502 `identity-provider-unavailable` when the provider cannot be reached. */
  configuration(): Promise<Configuration>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export function oidcFromEnv(env: Record<string, string | undefined>): OidcProvider | null {
  const issuer = env['PORTCULLIS_OIDC_ISSUER'];
  if (!issuer) return null;
  const clientId = env['PORTCULLIS_OIDC_CLIENT_ID'] ?? '';
  const clientSecret = env['PORTCULLIS_OIDC_CLIENT_SECRET'] ?? '';
  const url = new URL(issuer);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    throw new Error('PORTCULLIS_OIDC_ISSUER must be an https URL (plain http only on a loopback host)');
  }
  if (!clientId || !clientSecret) throw new Error('PORTCULLIS_OIDC_ISSUER needs PORTCULLIS_OIDC_CLIENT_ID and PORTCULLIS_OIDC_CLIENT_SECRET');
  let discovered: Promise<Configuration> | null = null;
  return {
    issuer,
    clientId,
    clientSecret,
    configuration() {
      discovered ??= (async () => {
        const client = await import('openid-client');
        const insecure = url.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined;
        return client.discovery(url, clientId, clientSecret, undefined, insecure);
      })().catch((err: unknown) => {
        discovered = null;
        throw new GatewayError('identity-provider-unavailable', undefined, { cause: err });
      });
      return discovered;
    },
  };
}
