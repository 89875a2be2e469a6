/** What the listeners are built from: the store, the live runtime, the meter, the logger, the capabilities and the hosts' origins. */
import type { RuntimeHolder } from '../config/reloader.js';
import type { Store } from '../store/store.js';
import type { Meter } from '../metering/meter.js';
import type { Logger } from '../log.js';
import type { JobStore } from '../jobs/store.js';
import type { JobEngine } from '../jobs/engine.js';
import type { ReviewStore } from '../reviews/store.js';
import type { HistoryRecorder } from '../secure/recorder.js';
import type { RateLimiter } from '../ratelimit/limiter.js';
import type { BillingStore } from '../billing/store.js';
import type { PaymentProcessor } from '../billing/stripe.js';
import type { HostName } from '../config/types.js';
import type { IdentityLinkStore } from '../identity-links/store.js';
import type { OidcProvider } from '../identity-links/provider.js';
import type { WalletAccountStore } from '../wallet/accounts.js';
import type { Sessions } from '../sessions/sessions.js';
import type { ChallengeStore } from '../challenges/store.js';
import type { PasskeyStore } from '../passkeys/store.js';
import type { SealedTotpStore } from '../totp/sealed-store.js';
import type { Receipts } from '../receipts/service.js';
import type { RecoveryStore } from '../recovery/store.js';
import type { UsageRecorder } from '../token-usage/store.js';
import type { Decisions } from '../decisions/service.js';

export interface Deps {
  store: Store;
  holder: RuntimeHolder;
  meter: Meter;
  log: Logger;
  jobs: JobStore;
  engine: JobEngine;
  /** The operator review list of flagged calls (src/reviews). */
  reviews: ReviewStore;
  /** The document version history GET /v1/secure serves (src/secure). */
  history: HistoryRecorder;
  /** Rate limits shared by every instance (src/ratelimit). */
  limiter: RateLimiter;
  /** Verification, applications, checkouts and applied webhook events (src/billing). */
  billing: BillingStore;
  /** Stripe, when STRIPE_SECRET_KEY is set; null otherwise (the routes that need it answer 503). */
  stripe: PaymentProcessor | null;
  /**
   * The public origin of every host (`listeners.<name>.url`, or http://localhost:<bound port>), known once
   * every listener is bound: what a browser sends as `Origin`, the passkey relying party, links between hosts.
   */
  origins: Record<HostName, string>;
  /** Which principal each wallet account signs in to (src/wallet). */
  walletAccounts: WalletAccountStore;
  /** Which account each linked OpenID Connect identity names (src/identity-links). */
  identityLinks: IdentityLinkStore;
  /** The OpenID Connect provider accounts may be linked to; null when none is configured. */
  oidc: OidcProvider | null;
  /** Sign-in sessions (src/sessions); routes reach them through auth/caller.ts. */
  sessions: Sessions;
  /** Single-use ceremony challenges and nonces (src/challenges). */
  challenges: ChallengeStore;
  /** Registered passkeys (src/passkeys). */
  passkeys: PasskeyStore;
  /** TOTP enrolments (src/totp), their secrets sealed with the data key. */
  totp: SealedTotpStore;
  /** Recovery keys and pending recoveries (src/recovery). */
  recovery: RecoveryStore;
  /** When each PAT was last used (src/token-usage), reported by identify about once a minute. */
  tokenUsage: UsageRecorder;
  /** The gateway's clock (epoch ms): tests move it to expire sessions, challenges and recovery delays. */
  now: () => number;
  /** The receipt log: its storage, key and signer (src/receipts). */
  receipts: Receipts;
  /** Decision records, version contents, shadow evaluation (src/decisions). */
  decisions: Decisions;
}
