/**
 * The wallet sign-in routes of the auth host, as Koa handlers: read and shape-check the body (its JSON
 * Schema is in auth/schemas.ts, with every sign-in route's), run the sign-in (src/wallet), and start the
 * session through the one seam (auth/caller.ts `startSession`), which sets the cookie. Handlers hold nothing between requests: a nonce handed out by one instance is
 * redeemed by any other through the store.
 *
 *   POST /v1/siwe/nonce                     {} or no body      -> {nonce}
 *   POST /v1/siwe/options                   {chainId?}         -> {domain, uri, chainId, version, statement, nonce, issuedAt, expirationTime}
 *   POST /v1/siwe/verify                    {message, signature}
 *   POST /v1/cacao/session                  {cacao}
 *   POST /v1/passkey/smart-account/options  {} or no body      -> the same fields as /v1/siwe/options, chainId 8453
 *   POST /v1/passkey/smart-account/verify   {message, signature}
 * A verify route answers {verified, principalId, username, address, chainId, created, method} (and
 * secondFactor: 'totp' when a code is owed), with the session cookie.
 *
 * Same-origin only, like every POST of the auth host (app/auth.ts), so no cross-site page can sign a
 * visitor in to an account of its choosing.
 */
import type { Context } from 'koa';
import type { Hex } from 'viem';
import { jsonBody } from '../auth/schemas.js';
import type { WalletDeps, WalletSignIn } from '../wallet/sign-in.js';
import { signInAnswer, startSession } from '../auth/caller.js';
import type { Deps } from '../app/deps.js';
import { requestChallenges } from '../challenges/ceremony.js';
import { hitAddress, SIGN_UP_LIMIT } from '../ratelimit/middleware.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type WalletRouteDeps = Pick<Deps, 'challenges' | 'holder' | 'limiter' | 'now' | 'origins' | 'sessions' | 'store' | 'walletAccounts'>;

/**
 * The sign-in methods and what they run on (viem, the CACAO verifiers), imported by the first wallet request,
 * not at start: they are about 28 MiB of RSS (7.5 MiB of heap) that a gateway whose callers never sign in
 * with a wallet does not need (bench/memory.ts). The first caller waits for the import once.
 */
type SignInMethods = typeof import('../wallet/siwe.js') & typeof import('../wallet/cacao.js') & typeof import('../wallet/smart-account.js');
let methods: Promise<SignInMethods> | null = null;
export function signInMethods(): Promise<SignInMethods> {
  return (methods ??= Promise.all([import('../wallet/siwe.js'), import('../wallet/cacao.js'), import('../wallet/smart-account.js')]).then(
    ([siwe, cacao, smartAccount]) => ({ ...siwe, ...cacao, ...smartAccount }),
  ));
}

/** What the wallet methods run on, from the listener's deps. */
export function walletDeps(deps: Pick<Deps, 'store' | 'holder' | 'challenges' | 'walletAccounts' | 'origins' | 'now'>): WalletDeps {
  return {
    store: deps.store,
    runtime: () => deps.holder.current,
    challenges: deps.challenges,
    accounts: deps.walletAccounts,
    authOrigin: deps.origins.auth,
    now: deps.now,
  };
}

export function walletRoutes(deps: WalletRouteDeps) {
  const w = walletDeps(deps);
  // A wallet sign-in is a primary factor, like a passkey: with TOTP enrolled the session starts pending-2fa
  // and the answer says `secondFactor: 'totp'` (auth/caller.ts).
  const finish = async (ctx: Context, signIn: WalletSignIn): Promise<void> => {
    const session = await startSession(ctx, deps, signIn.principal.id, signIn.method);
    const { address, chainId, created, method } = signIn;
    ctx.set('cache-control', 'no-store');
    ctx.body = { ...signInAnswer(signIn.principal, session), address, chainId, created, method };
  };
  const limit = () => w.runtime().gateway.limits.bodyBytes;
  // A first sign-in makes an account: counted against the request's address (rateLimits.signUpsPerAddressHour).
  // Its nonce is taken through the request, so an outage later in the sign-in gives it back (challenges/ceremony.ts).
  const signUpAt = (ctx: Context): WalletDeps => ({
    ...w,
    challenges: requestChallenges(ctx, deps.challenges),
    admitSignUp: () => hitAddress(ctx, deps.limiter, deps.holder, SIGN_UP_LIMIT),
  });
  return {
    siweNonce: async (ctx: Context): Promise<void> => {
      await jsonBody(ctx, limit(), 'empty');
      const { issueNonce } = await signInMethods();
      const { nonce } = await issueNonce(w, 'siwe');
      ctx.set('cache-control', 'no-store');
      ctx.body = { nonce };
    },
    siweOptions: async (ctx: Context): Promise<void> => {
      const body = await jsonBody<{ chainId?: number }>(ctx, limit(), 'siweOptions');
      const { siweChain, messageOptions } = await signInMethods();
      const chainId = siweChain(w, body.chainId);
      ctx.set('cache-control', 'no-store');
      ctx.body = await messageOptions(w, 'siwe', chainId);
    },
    siweVerify: async (ctx: Context): Promise<void> => {
      const body = await jsonBody<{ message: string; signature: Hex }>(ctx, limit(), 'signedMessage');
      await finish(ctx, await (await signInMethods()).siweSignIn(signUpAt(ctx), body));
    },
    cacaoSession: async (ctx: Context): Promise<void> => {
      const body = await jsonBody<{ cacao: string }>(ctx, limit(), 'cacaoSession');
      await finish(ctx, await (await signInMethods()).cacaoSignIn(signUpAt(ctx), body));
    },
    smartAccountOptions: async (ctx: Context): Promise<void> => {
      await jsonBody(ctx, limit(), 'empty');
      const { smartAccountConfig, messageOptions } = await signInMethods();
      const { chainId } = smartAccountConfig(w); // 503 before a nonce is spent when no node is configured
      ctx.set('cache-control', 'no-store');
      ctx.body = await messageOptions(w, 'smart-account', chainId);
    },
    smartAccountVerify: async (ctx: Context): Promise<void> => {
      const body = await jsonBody<{ message: string; signature: Hex }>(ctx, limit(), 'signedMessage');
      await finish(ctx, await (await signInMethods()).smartAccountSignIn(signUpAt(ctx), body));
    },
  };
}
