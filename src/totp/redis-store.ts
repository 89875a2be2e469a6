/**
 * TOTP enrolments in Redis, on the store's connection.
 * Layout under the prefix (on a cluster principalPrefix('totp', id), that principal's own tag):
 *   totp:<principalId>    hash    secret, state, lastStep, createdAt
 *   totpr:<principalId>   set     SHA-256 hashes of unused recovery codes
 *   totpf:<principalId>   hash    n (wrong codes), until (ms); expires with its window
 * Each check-and-use is one script.
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import type { TotpRecord } from './store.js';
import type { SealableTotpStore } from './sealed-store.js';

const BEGIN = loadLua(import.meta.url, 'lua/begin.lua');
const ACTIVATE = loadLua(import.meta.url, 'lua/activate.lua');
const USE_STEP = loadLua(import.meta.url, 'lua/use-step.lua');
const FAILURE = loadLua(import.meta.url, 'lua/failure.lua');
const REPLACE_SECRET = loadLua(import.meta.url, 'lua/replace-secret.lua');

export class RedisTotpStore implements SealableTotpStore {
  readonly #store: RedisStore;

  constructor(store: RedisStore) {
    this.#store = store;
  }

  // Every script here touches one principal's keys only, so on a cluster they carry that principal's tag.
  #k(space: 'totp' | 'totpr' | 'totpf', principalId: string): string {
    return `${this.#store.principalPrefix('totp', principalId)}${space}:${principalId}`;
  }

  async get(principalId: string): Promise<TotpRecord | null> {
    const h = await this.#store.command('totp.get', (c) => c.hGetAll(this.#k('totp', principalId)));
    if (Object.keys(h).length === 0) return null;
    return { principalId, secret: h['secret']!, state: h['state'] as TotpRecord['state'], lastStep: Number(h['lastStep']), createdAt: h['createdAt']! };
  }

  async begin(record: TotpRecord): Promise<boolean> {
    return (await this.#store.runScript('totp.begin', BEGIN, [this.#k('totp', record.principalId)], [record.secret, record.createdAt])) === 1;
  }

  async activate(principalId: string, step: number, recoveryHashes: string[]): Promise<boolean> {
    const keys = [this.#k('totp', principalId), this.#k('totpr', principalId)];
    return (await this.#store.runScript('totp.activate', ACTIVATE, keys, [String(step), ...recoveryHashes])) === 1;
  }

  async useStep(principalId: string, step: number): Promise<boolean> {
    return (await this.#store.runScript('totp.useStep', USE_STEP, [this.#k('totp', principalId)], [String(step)])) === 1;
  }

  async useRecoveryCode(principalId: string, hash: string): Promise<boolean> {
    return (await this.#store.command('totp.useRecoveryCode', (c) => c.sRem(this.#k('totpr', principalId), hash))) === 1;
  }

  async recoveryCodesLeft(principalId: string): Promise<number> {
    return Number(await this.#store.command('totp.recoveryCodesLeft', (c) => c.sCard(this.#k('totpr', principalId))));
  }

  async failure(principalId: string, now: number, windowMs: number): Promise<number> {
    return Number(await this.#store.runScript('totp.failure', FAILURE, [this.#k('totpf', principalId)], [String(now), String(windowMs)]));
  }

  async failures(principalId: string, now: number): Promise<number> {
    const h = await this.#store.command('totp.failures', (c) => c.hGetAll(this.#k('totpf', principalId)));
    return Number(h['until'] ?? 0) > now ? Number(h['n'] ?? 0) : 0;
  }

  async clearFailures(principalId: string): Promise<void> {
    await this.#store.command('totp.clearFailures', (c) => c.del(this.#k('totpf', principalId)));
  }

  async replaceSecret(principalId: string, expected: string, next: string): Promise<boolean> {
    return (await this.#store.runScript('totp.replaceSecret', REPLACE_SECRET, [this.#k('totp', principalId)], [expected, next])) === 1;
  }

  async *principals(): AsyncIterable<string> {
    // A record's key holds the id once on one primary and twice on a cluster (in its hash tag too), so the
    // id's length follows from the key's; each candidate is confirmed by building its key again.
    const empty = this.#k('totp', '').length;
    const perChar = this.#k('totp', 'x').length - empty;
    for await (const key of this.#store.scanKeys('*totp:*')) {
      const n = (key.length - empty) / perChar;
      if (!Number.isInteger(n) || n <= 0) continue;
      const id = key.slice(key.length - n);
      if (key === this.#k('totp', id)) yield id;
    }
  }
}
