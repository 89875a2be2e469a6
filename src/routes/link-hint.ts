/**
 * GET /v1/link/hint?id=<principal id> (auth host, public): which sign-in methods an account has, so a
 * person knows which to use — `{"methods": ["passkey", "totp", "recovery"]}` (primary methods first, then
 * the second factor and recovery when set up).
 *
 * It never reveals whether an identifier exists: an unknown id answers exactly what the commonest account
 * answers (`{"methods":["passkey"]}`), after the same store lookups, so neither the body nor the work done
 * tells the two apart. An account is told apart only by methods beyond a passkey, which an unknown id never
 * shows.
 *
 * Another sign-in capability (SIWE, CACAO, smart account) adds its method with one entry in METHODS.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import type { Deps } from '../app/deps.js';
import { methodsOf } from '../wallet/accounts.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type LinkHintDeps = Pick<Deps, 'passkeys' | 'recovery' | 'totp' | 'walletAccounts'>;

/** Each method and how to tell whether a principal has it. */
const METHODS: Array<[string, (deps: LinkHintDeps, principalId: string) => Promise<boolean>]> = [
  ['passkey', async (deps, pid) => (await deps.passkeys.list(pid)).length > 0],
  // Wallet accounts: an EOA signs in with SIWE or a CACAO alike; a smart account with its own route.
  ['siwe', async (deps, pid) => (await deps.walletAccounts.accountsOf(pid)).some((k) => methodsOf(k).includes('siwe'))],
  ['cacao', async (deps, pid) => (await deps.walletAccounts.accountsOf(pid)).some((k) => methodsOf(k).includes('cacao'))],
  ['smart-account', async (deps, pid) => (await deps.walletAccounts.accountsOf(pid)).some((k) => methodsOf(k).includes('smart-account'))],
  ['totp', async (deps, pid) => (await deps.totp.get(pid))?.state === 'active'],
  ['recovery', async (deps, pid) => (await deps.recovery.keyOf(pid))?.secretHash != null],
];

const DECOY = ['passkey'];

export function linkHint(deps: LinkHintDeps) {
  return async function linkHint(ctx: Context): Promise<void> {
    const id = ctx.query['id'];
    if (typeof id !== 'string' || !/^did:web:[a-z0-9.-]+:tenant:[a-z0-9-]{1,63}$/.test(id)) {
      throw new GatewayError('invalid-request', 'id must be a principal id (did:web:<domain>:tenant:<id>)');
    }
    const has = await Promise.all(METHODS.map(([, check]) => check(deps, id)));
    const methods = METHODS.filter((_, i) => has[i]).map(([name]) => name);
    ctx.set('cache-control', 'no-store');
    ctx.body = { methods: methods.length > 0 ? methods : DECOY };
  };
}
