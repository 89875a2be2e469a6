/**
 * Passkey ceremonies on the auth host, with @simplewebauthn/server (never by hand). Each ceremony is two
 * stateless handlers with the challenge in the store (src/challenges), so any instance can finish what
 * another began:
 *
 *   POST /v1/passkey/register/options  {username?} -> the WebAuthn creation options JSON, exactly as
 *        @simplewebauthn/server generates it. Without a session this will create a new principal
 *        (did:web:<domain>:tenant:<id>); with one it adds a passkey to the signed-in principal.
 *   POST /v1/passkey/register/verify   the JSON @simplewebauthn/browser's startRegistration returns ->
 *        {verified: true, principalId, username, created} and a session cookie (new principal)
 *   POST /v1/passkey/login/options     {} -> the WebAuthn request options JSON (discoverable credentials:
 *        no username asked)
 *   POST /v1/passkey/login/verify      the JSON startAuthentication returns -> {verified: true, principalId,
 *        username} and a session cookie — with `secondFactor: 'totp'` when TOTP is enrolled: the session is
 *        then pending-2fa until POST /v1/totp/verify
 *
 * Checked: the challenge (single-use, `passkeys.challengeMs`, taken from the store before anything else so
 * a failed attempt uses it up), the origin (the auth origin, or the console's), the rpID (the auth origin's
 * host name), user verification (required), and the signature counter, which must move forward
 * atomically — a replayed assertion is refused even when the challenge would allow it.
 */
import type { Context } from 'koa';
import { randomUUID } from 'node:crypto';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { GatewayError } from '../errors.js';
import { jsonBody } from '../auth/schemas.js';
import { resolveCaller, SESSION_ONLY, signInAnswer, startSession } from '../auth/caller.js';
import { createPrincipal, principalId as makePrincipalId, requirePrincipal } from '../auth/principals.js';
import type { Deps } from '../app/deps.js';
import { requestChallenges } from '../challenges/ceremony.js';
import { hitAddress, SIGN_UP_LIMIT } from '../ratelimit/middleware.js';

/**
 * @simplewebauthn/server and what it pulls in (X.509, ASN.1, CBOR: several MiB of code and heap) are loaded by
 * the first passkey ceremony, not at start: most gateways' processes never see one.
 */
let webauthnModule: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () => (webauthnModule ??= import('@simplewebauthn/server'));

/** What these routes use of the gateway's parts, and nothing more. */
export type PasskeyRouteDeps = Pick<Deps, 'challenges' | 'holder' | 'limiter' | 'now' | 'origins' | 'passkeys' | 'sessions' | 'store'>;

const REGISTER = 'passkey-register';
const LOGIN = 'passkey-login';

interface RegisterChallenge {
  /** Set when a signed-in principal adds a passkey. */
  principalId: string | null;
  /** The tenant and username of the principal to create, when none is signed in. */
  tenant: string;
  username: string;
}

function relyingParty(deps: PasskeyRouteDeps): { rpID: string; origins: string[] } {
  return { rpID: new URL(deps.origins.auth).hostname, origins: [...new Set([new URL(deps.origins.auth).origin, new URL(deps.origins.console).origin])] };
}

/** The challenge a response was made for, read from its clientDataJSON (to find it in the store). */
function challengeOf(clientDataJSON: string): string {
  try {
    const data = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    if (typeof data.challenge === 'string' && /^[A-Za-z0-9_-]{16,128}$/.test(data.challenge)) return data.challenge;
  } catch {
    /* answered below */
  }
  throw new GatewayError('invalid-request', 'response.clientDataJSON is not base64url JSON with a challenge');
}

/** Why the library refused, in our words: its messages may quote the challenge, which stays ours. */
function rejected(err: unknown): GatewayError {
  const m = err instanceof Error ? err.message : '';
  if (/counter/i.test(m)) return new GatewayError('passkey-replayed');
  if (/origin/i.test(m)) return new GatewayError('passkey-rejected', 'the ceremony ran on an origin other than the sign-in origin');
  if (/RP ID|rpId/i.test(m)) return new GatewayError('passkey-rejected', 'the passkey answered for another relying-party id than the sign-in host');
  if (/User verification/i.test(m)) return new GatewayError('passkey-rejected', 'user verification (PIN or biometric) is required');
  if (/User (presence|not present)/i.test(m)) return new GatewayError('passkey-rejected', 'user presence is required');
  if (/type/i.test(m)) return new GatewayError('passkey-rejected', 'the response is for another kind of ceremony');
  return new GatewayError('passkey-rejected');
}

/** A signed-in caller when the request carries a session cookie; null without one. */
async function signedIn(ctx: Context, deps: PasskeyRouteDeps) {
  if (!deps.sessions.hasCookie(ctx)) return null;
  return resolveCaller(ctx, deps, SESSION_ONLY);
}

export function registerOptions(deps: PasskeyRouteDeps) {
  return async function registerOptions(ctx: Context): Promise<void> {
    const body = await jsonBody<{ username?: string }>(ctx, deps.holder.current.gateway.limits.bodyBytes, 'passkeyRegisterOptions');
    const caller = await signedIn(ctx, deps);
    const { rpID } = relyingParty(deps);
    const cfg = deps.holder.current.gateway.passkeys;
    const tenant = randomUUID().replace(/-/g, '').slice(0, 16);
    const principalId = caller?.principal.id ?? makePrincipalId(deps.holder.current.gateway.principalDomain, tenant);
    const username = caller?.principal.username ?? body.username ?? tenant;
    const existing = caller ? await deps.passkeys.list(caller.principal.id) : [];
    const options = await (
      await webauthn()
    ).generateRegistrationOptions({
      rpName: cfg.rpName,
      rpID,
      userName: username,
      userID: new TextEncoder().encode(principalId),
      attestationType: 'none',
      timeout: cfg.challengeMs,
      excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    const data: RegisterChallenge = { principalId: caller?.principal.id ?? null, tenant, username };
    await deps.challenges.put(REGISTER, options.challenge, { data: { ...data }, expiresAt: deps.now() + cfg.challengeMs }, deps.now());
    ctx.set('cache-control', 'no-store');
    ctx.body = options;
  };
}

export function registerVerify(deps: PasskeyRouteDeps) {
  return async function registerVerify(ctx: Context): Promise<void> {
    const response = await jsonBody<RegistrationResponseJSON>(ctx, deps.holder.current.gateway.limits.bodyBytes, 'registrationResponse');
    const caller = await signedIn(ctx, deps);
    const challenge = challengeOf(response.response.clientDataJSON);
    const held = await requestChallenges(ctx, deps.challenges).take<RegisterChallenge>(REGISTER, challenge, deps.now());
    if (!held) throw new GatewayError('challenge-invalid');
    // A passkey for a signed-in principal is added only within that principal's session; and a ceremony begun
    // without one (a sign-up) is finished without one, so a session sent along is never silently replaced
    // by a new account's.
    if ((held.data.principalId ?? null) !== (caller?.principal.id ?? null)) throw new GatewayError('challenge-invalid');
    const { rpID, origins } = relyingParty(deps);
    let verified;
    try {
      verified = await (
        await webauthn()
      ).verifyRegistrationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: origins,
        expectedRPID: rpID,
        requireUserVerification: true,
      });
    } catch (err) {
      throw rejected(err);
    }
    if (!verified.verified) throw new GatewayError('passkey-rejected');
    const { credential } = verified.registrationInfo;
    if (await deps.passkeys.get(credential.id)) throw new GatewayError('passkey-exists');
    const runtime = deps.holder.current;
    let principal;
    if (held.data.principalId) {
      principal = await requirePrincipal(deps.store, held.data.principalId);
    } else {
      // A new account: counted against the address (rateLimits.signUpsPerAddressHour) before it is made.
      await hitAddress(ctx, deps.limiter, deps.holder, SIGN_UP_LIMIT);
      principal = await createPrincipal(deps.store, runtime, { tenant: held.data.tenant, username: held.data.username });
    }
    const added = await deps.passkeys.add({
      id: credential.id,
      principalId: principal.id,
      publicKey: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports ?? [],
      createdAt: new Date(deps.now()).toISOString(),
      lastUsedAt: null,
    });
    if (!added) throw new GatewayError('passkey-exists');
    const created = held.data.principalId === null;
    if (created) await startSession(ctx, deps, principal.id, 'passkey');
    ctx.set('cache-control', 'no-store');
    ctx.body = { verified: true, principalId: principal.id, username: principal.username, created };
  };
}

export function loginOptions(deps: PasskeyRouteDeps) {
  return async function loginOptions(ctx: Context): Promise<void> {
    await jsonBody(ctx, deps.holder.current.gateway.limits.bodyBytes, 'passkeyLoginOptions');
    const cfg = deps.holder.current.gateway.passkeys;
    const options = await (
      await webauthn()
    ).generateAuthenticationOptions({ rpID: relyingParty(deps).rpID, userVerification: 'required', timeout: cfg.challengeMs });
    await deps.challenges.put(LOGIN, options.challenge, { data: {}, expiresAt: deps.now() + cfg.challengeMs }, deps.now());
    ctx.set('cache-control', 'no-store');
    ctx.body = options;
  };
}

export function loginVerify(deps: PasskeyRouteDeps) {
  return async function loginVerify(ctx: Context): Promise<void> {
    const response = await jsonBody<AuthenticationResponseJSON>(ctx, deps.holder.current.gateway.limits.bodyBytes, 'authenticationResponse');
    const challenge = challengeOf(response.response.clientDataJSON);
    if (!(await requestChallenges(ctx, deps.challenges).take(LOGIN, challenge, deps.now()))) throw new GatewayError('challenge-invalid');
    const passkey = await deps.passkeys.get(response.id);
    if (!passkey) throw new GatewayError('passkey-unknown');
    const { rpID, origins } = relyingParty(deps);
    let verified;
    try {
      verified = await (
        await webauthn()
      ).verifyAuthenticationResponse({
        response,
        expectedChallenge: challenge,
        expectedOrigin: origins,
        expectedRPID: rpID,
        requireUserVerification: true,
        credential: { id: passkey.id, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.counter, transports: passkey.transports },
      });
    } catch (err) {
      throw rejected(err);
    }
    if (!verified.verified) throw new GatewayError('passkey-rejected', 'the signature does not verify with the registered passkey');
    // The counter moves forward atomically: a racing replay of the same assertion loses here.
    if (!(await deps.passkeys.advance(passkey.id, verified.authenticationInfo.newCounter, new Date(deps.now()).toISOString()))) {
      throw new GatewayError('passkey-replayed');
    }
    const principal = await deps.store.getPrincipal(passkey.principalId);
    if (!principal) throw new GatewayError('passkey-unknown');
    const session = await startSession(ctx, deps, principal.id, 'passkey');
    ctx.set('cache-control', 'no-store');
    ctx.body = signInAnswer(principal, session);
  };
}
