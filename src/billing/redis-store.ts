/**
 * The billing store in Redis, beside the store's keys and on its connection (its deadlines, its
 * fail-closed behaviour). Layout under the prefix (familyPrefix('bk') on a cluster, store/redis.ts):
 *   be:<eventId>              string  the outcome of an applied webhook event (SET NX: the first stands)
 *   bc:<principal>            string  the principal's Stripe customer id (SET NX)
 *   bcx:<customer>            string  the principal of a customer id
 *   bk:<principal>            hash    check kind -> CheckRecord JSON (replaced only by a newer `at`)
 *   bo:<principal>:<request>  string  the CheckoutRecord JSON of a checkout request id (SET NX)
 *   ba:<id>                   string  the ApplicationRecord JSON as submitted (SET NX)
 *   bad:<id>                  hash    its decision: status, decidedAt, note (HSETNX on status: one decision)
 *   bal                       zset    application ids by submission time (ms)
 *   bap:<principal>           zset    the principal's application ids by submission time
 *   bs:<operationId>          string  a StorageGrant JSON (SET NX)
 *   bsp:<principal>           zset    the principal's storage grant operation ids by time
 * Nothing here expires: these are records of money and verification, kept like receipts.
 */
import { loadLua, type LuaScript } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import {
  MAX_APPLICATION_PAGE,
  type ApplicationRecord,
  type BillingStore,
  type CheckKind,
  type CheckRecord,
  type CheckoutRecord,
  type StorageGrant,
} from './store.js';

const LINK = loadLua(import.meta.url, 'lua/link.lua');
const PUT_CHECK = loadLua(import.meta.url, 'lua/put-check.lua');
const PUT_APP = loadLua(import.meta.url, 'lua/put-app.lua');
const LIST_APPS = loadLua(import.meta.url, 'lua/list-apps.lua');
const DECIDE = loadLua(import.meta.url, 'lua/decide.lua');
const GRANT_STORAGE = loadLua(import.meta.url, 'lua/grant-storage.lua');
const LIST_STORAGE = loadLua(import.meta.url, 'lua/list-storage.lua');

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

function withDecision(json: string, d: Record<string, string>): ApplicationRecord {
  const app = JSON.parse(json) as ApplicationRecord;
  if (d['status']) {
    app.status = d['status'] as ApplicationRecord['status'];
    app.decidedAt = d['decidedAt'] ?? null;
    app.decisionNote = d['note'] ? d['note'] : null;
  }
  return app;
}

export class RedisBillingStore implements BillingStore {
  readonly #store: RedisStore;
  readonly #p: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#p = store.familyPrefix('bk');
  }

  #run(op: string, script: LuaScript, keys: string[], args: string[] = []): Promise<unknown> {
    return this.#store.runScript(
      `billing.${op}`,
      script,
      keys.map((k) => this.#p + k),
      args,
    );
  }

  /** One key's string value (GET), the key under the family's prefix. */
  async #get(op: string, key: string): Promise<string | null> {
    const v = await this.#store.command(`billing.${op}`, (c) => c.get(this.#p + key));
    return v === null ? null : String(v);
  }

  async eventApplied(eventId: string): Promise<boolean> {
    return (await this.#get('eventApplied', `be:${eventId}`)) !== null;
  }

  async markEventApplied(eventId: string, outcome: string): Promise<void> {
    await this.#store.command('billing.markEventApplied', (c) => c.set(`${this.#p}be:${eventId}`, outcome, { condition: 'NX' }));
  }

  async linkCustomer(principalId: string, customerId: string): Promise<string> {
    return (await this.#run('linkCustomer', LINK, [`bc:${principalId}`, `bcx:${customerId}`], [customerId, principalId])) as string;
  }

  async customerOf(principalId: string): Promise<string | null> {
    return this.#get('customerOf', `bc:${principalId}`);
  }

  async principalOfCustomer(customerId: string): Promise<string | null> {
    return this.#get('principalOfCustomer', `bcx:${customerId}`);
  }

  async putCheck(principalId: string, kind: CheckKind, check: CheckRecord): Promise<boolean> {
    return (await this.#run('putCheck', PUT_CHECK, [`bk:${principalId}`], [kind, JSON.stringify(check), String(check.at)])) === 1;
  }

  async checks(principalId: string): Promise<Partial<Record<CheckKind, CheckRecord>>> {
    const all = await this.#store.command('billing.checks', (c) => c.hGetAll(`${this.#p}bk:${principalId}`));
    const out: Partial<Record<CheckKind, CheckRecord>> = {};
    for (const kind of ['card', 'identity', 'screening'] as const) {
      if (all[kind]) out[kind] = JSON.parse(all[kind]) as CheckRecord;
    }
    return out;
  }

  async putCheckout(principalId: string, requestId: string, record: CheckoutRecord): Promise<CheckoutRecord> {
    // SET NX GET: the record stored first stands; null means this one was.
    const json = JSON.stringify(record);
    const held = await this.#store.command('billing.putCheckout', (c) =>
      c.set(`${this.#p}bo:${principalId}:${requestId}`, json, { condition: 'NX', GET: true }),
    );
    return JSON.parse(held === null ? json : String(held)) as CheckoutRecord;
  }

  async getCheckout(principalId: string, requestId: string): Promise<CheckoutRecord | null> {
    const r = await this.#get('getCheckout', `bo:${principalId}:${requestId}`);
    return r ? (JSON.parse(r) as CheckoutRecord) : null;
  }

  async putApplication(app: ApplicationRecord): Promise<void> {
    await this.#run(
      'putApplication',
      PUT_APP,
      [`ba:${app.id}`, 'bal', `bap:${app.principalId}`],
      [JSON.stringify(app), app.id, String(Date.parse(app.submittedAt))],
    );
  }

  async getApplication(id: string): Promise<ApplicationRecord | null> {
    const [app] = await this.#list('getApplication', null, id);
    return app ?? null;
  }

  async #list(op: string, index: string | null, single?: string): Promise<ApplicationRecord[]> {
    if (single !== undefined) {
      const json = await this.#get(op, `ba:${single}`);
      if (!json) return [];
      return [withDecision(json, await this.#store.command(`billing.${op}`, (c) => c.hGetAll(`${this.#p}bad:${single}`)))];
    }
    const rows = (await this.#run(op, LIST_APPS, [index!, ''], [String(MAX_APPLICATION_PAGE * 4)])) as Array<[string, string[]]>;
    return rows.map(([json, d]) => withDecision(json, pairs(d)));
  }

  async listApplications(status?: ApplicationRecord['status']): Promise<ApplicationRecord[]> {
    return (await this.#list('listApplications', 'bal')).filter((a) => !status || a.status === status).slice(0, MAX_APPLICATION_PAGE);
  }

  async applicationsOf(principalId: string): Promise<ApplicationRecord[]> {
    return this.#list('applicationsOf', `bap:${principalId}`);
  }

  async decideApplication(id: string, status: 'approved' | 'refused', note: string | null, at: string) {
    const reply = (await this.#run('decideApplication', DECIDE, [`ba:${id}`, `bad:${id}`], [status, at, note ?? ''])) as [number, string, string[]] | null;
    if (!reply) return null;
    return { record: withDecision(reply[1], pairs(reply[2])), decided: reply[0] === 1 };
  }

  async grantStorage(grant: StorageGrant): Promise<boolean> {
    return (
      (await this.#run(
        'grantStorage',
        GRANT_STORAGE,
        [`bs:${grant.operationId}`, `bsp:${grant.principalId}`],
        [JSON.stringify(grant), grant.operationId, String(Date.parse(grant.grantedAt))],
      )) === 1
    );
  }

  async storageGrants(principalId: string): Promise<StorageGrant[]> {
    return ((await this.#run('storageGrants', LIST_STORAGE, [`bsp:${principalId}`, ''])) as string[]).map((g) => JSON.parse(g) as StorageGrant);
  }
}
