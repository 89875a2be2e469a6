/**
 * Passkey ceremonies against a test gateway's auth host, driven by the software authenticator (a real
 * ES256 key signing real clientDataJSON and authenticatorData), through a Browser (cookies, Origin).
 */
import { SoftAuthenticator, type Quirks } from '../../src/cli/soft-authenticator.js';
import type { Answer, Browser } from './browser.js';

export { SoftAuthenticator };

/** The browser page of a ceremony is the auth origin. */
function onAuthPage(b: Browser): string {
  b.origin = b.gw.origins.auth;
  return b.gw.origins.auth;
}

export async function registerOptions(b: Browser, body: Record<string, unknown> = {}): Promise<Answer> {
  onAuthPage(b);
  return b.post('auth', '/v1/passkey/register/options', body);
}

/** Registration from options to verify; `quirks` make the authenticator misbehave. */
export async function register(
  b: Browser,
  a: SoftAuthenticator,
  opts: { username?: string; quirks?: Quirks } = {},
): Promise<{ options: Answer; verify: Answer; response: unknown }> {
  const origin = onAuthPage(b);
  const options = await registerOptions(b, opts.username ? { username: opts.username } : {});
  if (options.status !== 200) throw new Error(`register/options: ${options.status} ${JSON.stringify(options.body)}`);
  const response = a.create(options.body, origin, opts.quirks);
  const verify = await b.post('auth', '/v1/passkey/register/verify', response);
  return { options, verify, response };
}

export async function login(b: Browser, a: SoftAuthenticator, quirks?: Quirks): Promise<{ options: Answer; verify: Answer; response: unknown }> {
  const origin = onAuthPage(b);
  const options = await b.post('auth', '/v1/passkey/login/options', {});
  if (options.status !== 200) throw new Error(`login/options: ${options.status} ${JSON.stringify(options.body)}`);
  const response = a.get(options.body, origin, quirks);
  const verify = await b.post('auth', '/v1/passkey/login/verify', response);
  return { options, verify, response };
}

/** A new person: a fresh passkey registered, so a new principal, and its browser signed in. */
export async function newPerson(b: Browser, username?: string): Promise<{ a: SoftAuthenticator; principalId: string }> {
  const a = new SoftAuthenticator();
  const { verify } = await register(b, a, username ? { username } : {});
  if (verify.status !== 200) throw new Error(`register/verify: ${verify.status} ${JSON.stringify(verify.body)}`);
  return { a, principalId: verify.body.principalId as string };
}
