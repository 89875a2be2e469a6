/**
 * Wallet accounts: which principal an Ethereum account signs in to, and which accounts a principal has. The
 * first sign-in of an account links it to a new principal; every later one finds that principal here; the
 * link hint (GET /v1/link/hint) asks the other way round. Keys name the account, not the method: an
 * externally owned account is `eoa:<address>` whatever chain its SIWE or CACAO message names (one key, any
 * chain), so SIWE and CACAO with the same key reach the same principal; a smart account is
 * `sca:<chainId>:<address>`, because a contract at one address on two chains need not be the same account.
 *
 * Implementations: `redis-accounts.ts` (on the store's connection) and `memory-accounts.ts`; one contract
 * suite (test/wallet/accounts-contract.test.ts) holds both to the same answers.
 */
import type { Address } from 'viem';

export interface WalletAccountStore {
  /** The principal the account is linked to, or null. */
  owner(key: string): Promise<string | null>;
  /**
   * Links the account to `principalId` unless it is linked already; answers the principal it is linked to
   * afterwards. Atomic: of racing first sign-ins exactly one principal wins, and every racer is told which;
   * the principal's list of accounts gains the key in the same step.
   */
  link(key: string, principalId: string): Promise<string>;
  /** The keys of the accounts linked to the principal, sorted; [] when none. */
  accountsOf(principalId: string): Promise<string[]>;
  /**
   * Unlinks the account when it is the principal's (the link and the principal's list together); answers
   * whether it was. The account is then unseen: its next sign-in makes a new principal, or a signed-in
   * principal may link it.
   */
  unlink(key: string, principalId: string): Promise<boolean>;
}

export function eoaKey(address: Address): string {
  return `eoa:${address.toLowerCase()}`;
}

export function smartAccountKey(chainId: number, address: Address): string {
  return `sca:${chainId}:${address.toLowerCase()}`;
}

/** The wallet sign-in methods an account key opens: an EOA signs SIWE and CACAO alike. */
export function methodsOf(key: string): string[] {
  return key.startsWith('eoa:') ? ['siwe', 'cacao'] : ['smart-account'];
}
