/**
 * Which implementation each capability runs on, decided in one place: a capability that keeps state beside
 * the store runs in Redis on the store's connection when the store is Redis, and in this process when it is
 * the memory store. A new capability adds one line here (and one field to `Capabilities`), not an import
 * pair and a ternary in server.ts. This is the one place that asks which store it was given.
 *
 * The money capabilities come as one set (`money`): the ledger (meter) opens and closes the calls' jobs in
 * its own writes, so it is made with the job store of its own kind, and the receipt log reads what the
 * ledger's settlements sequence.
 */
import { RedisStore } from '../store/redis.js';
import { MemoryStore } from '../store/memory.js';
import type { Store } from '../store/store.js';
import type { Meter } from '../metering/meter.js';
import { DurableMeter } from '../metering/durable.js';
import { MemoryMeter } from '../metering/memory-meter.js';
import { RedisMeter } from '../metering/redis-meter.js';
import type { ReceiptLog } from '../receipts/log.js';
import { RedisReceiptLog } from '../receipts/redis-log.js';
import { MemoryReceiptLog } from '../receipts/memory-log.js';
import type { JobStore } from '../jobs/store.js';
import { RedisJobStore } from '../jobs/redis-store.js';
import { MemoryJobStore } from '../jobs/memory-store.js';
import type { ReviewStore } from '../reviews/store.js';
import { RedisReviewStore } from '../reviews/redis-store.js';
import { MemoryReviewStore } from '../reviews/memory-store.js';
import type { HistoryStore } from '../secure/history.js';
import { RedisHistoryStore } from '../secure/redis-history.js';
import { MemoryHistoryStore } from '../secure/memory-history.js';
import type { RateLimiter } from '../ratelimit/limiter.js';
import { RedisRateLimiter } from '../ratelimit/redis.js';
import { MemoryRateLimiter } from '../ratelimit/memory.js';
import type { WalletAccountStore } from '../wallet/accounts.js';
import { RedisWalletAccounts } from '../wallet/redis-accounts.js';
import { MemoryWalletAccounts } from '../wallet/memory-accounts.js';
import type { SessionStore } from '../sessions/store.js';
import { RedisSessionStore } from '../sessions/redis-store.js';
import { MemorySessionStore } from '../sessions/memory-store.js';
import type { ChallengeStore } from '../challenges/store.js';
import { RedisChallengeStore } from '../challenges/redis-store.js';
import { MemoryChallengeStore } from '../challenges/memory-store.js';
import type { PasskeyStore } from '../passkeys/store.js';
import { RedisPasskeyStore } from '../passkeys/redis-store.js';
import { MemoryPasskeyStore } from '../passkeys/memory-store.js';
import { SealedTotpStore, type SealableTotpStore } from '../totp/sealed-store.js';
import type { DataKeyring } from '../data-key/keyring.js';
import type { Logger } from '../log.js';
import { RedisTotpStore } from '../totp/redis-store.js';
import { MemoryTotpStore } from '../totp/memory-store.js';
import type { BillingStore } from '../billing/store.js';
import { RedisBillingStore } from '../billing/redis-store.js';
import { MemoryBillingStore } from '../billing/memory-store.js';
import type { RecoveryStore } from '../recovery/store.js';
import { RedisRecoveryStore } from '../recovery/redis-store.js';
import { MemoryRecoveryStore } from '../recovery/memory-store.js';
import type { TokenUsageStore } from '../token-usage/store.js';
import type { IdentityLinkStore } from '../identity-links/store.js';
import { RedisIdentityLinks } from '../identity-links/redis-store.js';
import { MemoryIdentityLinks } from '../identity-links/memory-store.js';
import { RedisTokenUsageStore } from '../token-usage/redis-store.js';
import { MemoryTokenUsageStore } from '../token-usage/memory-store.js';
import type { DecisionStore } from '../decisions/store.js';
import { RedisDecisionStore } from '../decisions/redis-store.js';
import { MemoryDecisionStore } from '../decisions/memory-store.js';

export interface Capabilities {
  jobs: JobStore;
  /** The ledger and balances (src/metering), its money writes held until the store's replicas have them. */
  meter: Meter;
  /** The receipt log the settlements sequence receipts in (src/receipts). */
  receiptLog: ReceiptLog;
  reviews: ReviewStore;
  history: HistoryStore;
  /** Rate limits shared by every instance (src/ratelimit). */
  limiter: RateLimiter;
  /** Which principal a wallet account signs in to. */
  walletAccounts: WalletAccountStore;
  /** Which account a linked identity-provider identity names. */
  identityLinks: IdentityLinkStore;
  sessions: SessionStore;
  challenges: ChallengeStore;
  passkeys: PasskeyStore;
  /** TOTP enrolments, their secrets sealed at rest with the data key (src/data-key). */
  totp: SealedTotpStore;
  billing: BillingStore;
  recovery: RecoveryStore;
  tokenUsage: TokenUsageStore;
  /** Decision records and the content of every version (src/decisions). */
  decisions: DecisionStore;
}

/** One pair per capability: [on Redis, in memory]. */
export function wireCapabilities(store: Store, opts: { dataKey: DataKeyring; log: Logger; now?: () => number }): Capabilities {
  const pick = <T>(onRedis: (s: RedisStore) => T, inMemory: () => T): T => (store instanceof RedisStore ? onRedis(store) : inMemory());
  return {
    ...money(store, opts.now),
    reviews: pick<ReviewStore>(
      (s) => new RedisReviewStore(s),
      () => new MemoryReviewStore(),
    ),
    history: pick<HistoryStore>(
      (s) => new RedisHistoryStore(s),
      () => new MemoryHistoryStore(),
    ),
    limiter: pick<RateLimiter>(
      (s) => new RedisRateLimiter(s),
      () => new MemoryRateLimiter(),
    ),
    walletAccounts: pick<WalletAccountStore>(
      (s) => new RedisWalletAccounts(s),
      () => new MemoryWalletAccounts(),
    ),
    identityLinks: pick<IdentityLinkStore>(
      (s) => new RedisIdentityLinks(s),
      () => new MemoryIdentityLinks(),
    ),
    sessions: pick<SessionStore>(
      (s) => new RedisSessionStore(s),
      () => new MemorySessionStore(),
    ),
    challenges: pick<ChallengeStore>(
      (s) => new RedisChallengeStore(s),
      () => new MemoryChallengeStore(),
    ),
    passkeys: pick<PasskeyStore>(
      (s) => new RedisPasskeyStore(s),
      () => new MemoryPasskeyStore(),
    ),
    totp: new SealedTotpStore(
      pick<SealableTotpStore>(
        (s) => new RedisTotpStore(s),
        () => new MemoryTotpStore(),
      ),
      opts.dataKey,
      opts.log,
    ),
    billing: pick<BillingStore>(
      (s) => new RedisBillingStore(s),
      () => new MemoryBillingStore(),
    ),
    recovery: pick<RecoveryStore>(
      (s) => new RedisRecoveryStore(s),
      () => new MemoryRecoveryStore(),
    ),
    tokenUsage: pick<TokenUsageStore>(
      (s) => new RedisTokenUsageStore(s),
      () => new MemoryTokenUsageStore(),
    ),
    decisions: pick<DecisionStore>(
      (s) => new RedisDecisionStore(s),
      () => new MemoryDecisionStore(),
    ),
  };
}

/** The jobs, the ledger made with them, and the receipt log, all of the store's kind. */
function money(store: Store, now: (() => number) | undefined): { jobs: JobStore; meter: Meter; receiptLog: ReceiptLog } {
  const clock = now ? { now } : {};
  if (store instanceof RedisStore) {
    const jobs = new RedisJobStore(store, now);
    return { jobs, meter: new DurableMeter(new RedisMeter(store, { ...clock, jobs }), store), receiptLog: new RedisReceiptLog(store) };
  }
  const jobs = new MemoryJobStore();
  return { jobs, meter: new DurableMeter(new MemoryMeter(store, { ...clock, jobs }), store), receiptLog: receiptLogFor(store) };
}

/** The receipt log beside a store: in Redis under its money prefix, or the memory store's own. */
export function receiptLogFor(store: Store): ReceiptLog {
  if (store instanceof RedisStore) return new RedisReceiptLog(store);
  if (store instanceof MemoryStore) return new MemoryReceiptLog(store.log);
  throw new TypeError(`no receipt log for a ${store.kind} store`);
}
