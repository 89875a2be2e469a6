/**
 * TOTP enrolments with their shared secret sealed at rest (src/data-key): a decorator over either store, so
 * the Redis and memory implementations keep one contract and neither ever holds a secret in clear.
 *
 * A record's secret is opened only when it is read, since most reads need only the enrolment's state (does
 * this principal owe a second factor?), and those must keep working when the secret cannot be opened: a
 * gateway without the key the record was sealed with still lets its owner finish sign-in with a recovery
 * code, and reading the secret itself answers 503 `data-key-unavailable`. A record written in clear (before
 * sealing existed) or under an older key is rewrapped under the current key the first time it is read.
 */
import { GatewayError } from '../errors.js';
import { DataKeyError, type DataKeyring } from '../data-key/keyring.js';
import type { Logger } from '../log.js';
import type { TotpRecord, TotpStore } from './store.js';

/** The additional data a TOTP secret is sealed with: it opens only on its own principal's record. */
const aadOf = (principalId: string) => `totp:${principalId}`;

export interface SealableTotpStore extends TotpStore {
  /** Replaces the stored secret, only while it is still `expected`; false when it changed meanwhile. */
  replaceSecret(principalId: string, expected: string, next: string): Promise<boolean>;
  /** Every principal with a TOTP record (for a rewrap of the whole store). */
  principals(): AsyncIterable<string>;
}

export class SealedTotpStore implements TotpStore {
  readonly #inner: SealableTotpStore;
  readonly #ring: DataKeyring;
  readonly #log: Logger;

  constructor(inner: SealableTotpStore, ring: DataKeyring, log: Logger) {
    this.#inner = inner;
    this.#ring = ring;
    this.#log = log;
  }

  /** The id of the key new seals use. */
  get keyId(): string {
    return this.#ring.currentId;
  }

  async get(principalId: string): Promise<TotpRecord | null> {
    const stored = await this.#inner.get(principalId);
    if (!stored) return null;
    const ring = this.#ring;
    const log = this.#log;
    const sealed = stored.secret;
    let opened: string | undefined;
    const record = { ...stored };
    Object.defineProperty(record, 'secret', {
      enumerable: true,
      get(): string {
        if (opened !== undefined) return opened;
        if (!ring.isSealed(sealed)) return (opened = sealed);
        try {
          return (opened = ring.open(sealed, aadOf(principalId)));
        } catch (err) {
          if (!(err instanceof DataKeyError)) throw err;
          log.error('totp.secret.unopenable', { reason: err.message });
          throw new GatewayError('data-key-unavailable');
        }
      },
    });
    if (ring.needsRewrap(sealed)) await this.#rewrap(principalId, record, sealed);
    return record;
  }

  /** Seals the record's secret under the current key, unless it cannot be opened (then it is left as it is). */
  async #rewrap(principalId: string, record: TotpRecord, sealed: string): Promise<boolean> {
    let secret: string;
    try {
      secret = record.secret;
    } catch {
      return false;
    }
    return this.#inner.replaceSecret(principalId, sealed, this.#ring.seal(secret, aadOf(principalId)));
  }

  /** Rewraps every record under the current key: how many were rewrapped, and how many could not be opened. */
  async rewrapAll(): Promise<{ rewrapped: number; unopenable: number; total: number }> {
    const counts = { rewrapped: 0, unopenable: 0, total: 0 };
    for await (const principalId of this.#inner.principals()) {
      const stored = await this.#inner.get(principalId);
      if (!stored) continue;
      counts.total++;
      if (!this.#ring.needsRewrap(stored.secret)) continue;
      const record = await this.get(principalId);
      try {
        void record!.secret;
        counts.rewrapped++;
      } catch {
        counts.unopenable++;
      }
    }
    return counts;
  }

  begin(record: TotpRecord): Promise<boolean> {
    return this.#inner.begin({ ...record, secret: this.#ring.seal(record.secret, aadOf(record.principalId)) });
  }
  activate(principalId: string, step: number, recoveryHashes: string[]): Promise<boolean> {
    return this.#inner.activate(principalId, step, recoveryHashes);
  }
  useStep(principalId: string, step: number): Promise<boolean> {
    return this.#inner.useStep(principalId, step);
  }
  useRecoveryCode(principalId: string, hash: string): Promise<boolean> {
    return this.#inner.useRecoveryCode(principalId, hash);
  }
  recoveryCodesLeft(principalId: string): Promise<number> {
    return this.#inner.recoveryCodesLeft(principalId);
  }
  failure(principalId: string, now: number, windowMs: number): Promise<number> {
    return this.#inner.failure(principalId, now, windowMs);
  }
  failures(principalId: string, now: number): Promise<number> {
    return this.#inner.failures(principalId, now);
  }
  clearFailures(principalId: string): Promise<void> {
    return this.#inner.clearFailures(principalId);
  }
}
