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
import { luaScript, type RedisStore } from '../store/redis.js';
import {
  MAX_APPLICATION_PAGE,
  type ApplicationRecord,
  type BillingStore,
  type CheckKind,
  type CheckRecord,
  type CheckoutRecord,
  type StorageGrant,
} from './store.js';

const GET = luaScript(`return redis.call('GET', KEYS[1])`);
const SET_NX = luaScript(`return redis.call('SET', KEYS[1], ARGV[1], 'NX') and 1 or 0`);
// Sets KEYS[1] unless set, and answers what is stored.
const SET_NX_GET = luaScript(`redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`);

// KEYS principal->customer, customer->principal  ARGV customer, principal
const LINK = luaScript(`redis.call('SET', KEYS[1], ARGV[1], 'NX')
redis.call('SET', KEYS[2], ARGV[2])
return redis.call('GET', KEYS[1])`);

// KEYS checks hash  ARGV kind, json, at
const PUT_CHECK = luaScript(`local old = redis.call('HGET', KEYS[1], ARGV[1] .. ':at')
if old and tonumber(old) > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[1] .. ':at', ARGV[3])
return 1`);
const GET_CHECKS = luaScript(`return redis.call('HGETALL', KEYS[1])`);

// KEYS app, all, principal's  ARGV json, id, score
const PUT_APP = luaScript(`if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
end
return 1`);
// KEYS index  ARGV prefix, limit: each id's record and its decision fields
const LIST_APPS = luaScript(`local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)) do
  local a = redis.call('GET', ARGV[1] .. 'ba:' .. id)
  if a then out[#out + 1] = {a, redis.call('HGETALL', ARGV[1] .. 'bad:' .. id)} end
end
return out`);
// KEYS app, decision  ARGV status, at, note
const DECIDE = luaScript(`if not redis.call('GET', KEYS[1]) then return false end
local decided = redis.call('HSETNX', KEYS[2], 'status', ARGV[1])
if decided == 1 then redis.call('HSET', KEYS[2], 'decidedAt', ARGV[2], 'note', ARGV[3]) end
return {decided, redis.call('GET', KEYS[1]), redis.call('HGETALL', KEYS[2])}`);

// KEYS grant, principal's  ARGV json, opId, score
const GRANT_STORAGE = luaScript(`if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
  return 1
end
return 0`);
const LIST_STORAGE = luaScript(`local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local g = redis.call('GET', ARGV[1] .. 'bs:' .. id)
  if g then out[#out + 1] = g end
end
return out`);

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

function withDecision(json: string, flat: string[]): ApplicationRecord {
  const app = JSON.parse(json) as ApplicationRecord;
  const d = pairs(flat);
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

  #run(op: string, script: ReturnType<typeof luaScript>, keys: string[], args: string[] = []): Promise<unknown> {
    return this.#store.runScript(`billing.${op}`, script, keys.map((k) => this.#p + k), args);
  }

  async eventApplied(eventId: string): Promise<boolean> {
    return (await this.#run('eventApplied', GET, [`be:${eventId}`])) !== null;
  }

  async markEventApplied(eventId: string, outcome: string): Promise<void> {
    await this.#run('markEventApplied', SET_NX, [`be:${eventId}`], [outcome]);
  }

  async linkCustomer(principalId: string, customerId: string): Promise<string> {
    return (await this.#run('linkCustomer', LINK, [`bc:${principalId}`, `bcx:${customerId}`], [customerId, principalId])) as string;
  }

  async customerOf(principalId: string): Promise<string | null> {
    return ((await this.#run('customerOf', GET, [`bc:${principalId}`])) as string | null) ?? null;
  }

  async principalOfCustomer(customerId: string): Promise<string | null> {
    return ((await this.#run('principalOfCustomer', GET, [`bcx:${customerId}`])) as string | null) ?? null;
  }

  async putCheck(principalId: string, kind: CheckKind, check: CheckRecord): Promise<boolean> {
    return (await this.#run('putCheck', PUT_CHECK, [`bk:${principalId}`], [kind, JSON.stringify(check), String(check.at)])) === 1;
  }

  async checks(principalId: string): Promise<Partial<Record<CheckKind, CheckRecord>>> {
    const all = pairs((await this.#run('checks', GET_CHECKS, [`bk:${principalId}`])) as string[]);
    const out: Partial<Record<CheckKind, CheckRecord>> = {};
    for (const kind of ['card', 'identity', 'screening'] as const) {
      if (all[kind]) out[kind] = JSON.parse(all[kind]) as CheckRecord;
    }
    return out;
  }

  async putCheckout(principalId: string, requestId: string, record: CheckoutRecord): Promise<CheckoutRecord> {
    return JSON.parse((await this.#run('putCheckout', SET_NX_GET, [`bo:${principalId}:${requestId}`], [JSON.stringify(record)])) as string) as CheckoutRecord;
  }

  async getCheckout(principalId: string, requestId: string): Promise<CheckoutRecord | null> {
    const r = (await this.#run('getCheckout', GET, [`bo:${principalId}:${requestId}`])) as string | null;
    return r ? (JSON.parse(r) as CheckoutRecord) : null;
  }

  async putApplication(app: ApplicationRecord): Promise<void> {
    await this.#run('putApplication', PUT_APP, [`ba:${app.id}`, 'bal', `bap:${app.principalId}`], [JSON.stringify(app), app.id, String(Date.parse(app.submittedAt))]);
  }

  async getApplication(id: string): Promise<ApplicationRecord | null> {
    const [app] = await this.#list('getApplication', null, id);
    return app ?? null;
  }

  async #list(op: string, index: string | null, single?: string): Promise<ApplicationRecord[]> {
    if (single !== undefined) {
      const json = (await this.#run(op, GET, [`ba:${single}`])) as string | null;
      if (!json) return [];
      return [withDecision(json, (await this.#run(op, GET_CHECKS, [`bad:${single}`])) as string[])];
    }
    const rows = (await this.#run(op, LIST_APPS, [index!], [this.#p, String(MAX_APPLICATION_PAGE * 4)])) as Array<[string, string[]]>;
    return rows.map(([json, d]) => withDecision(json, d));
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
    return { record: withDecision(reply[1], reply[2]), decided: reply[0] === 1 };
  }

  async grantStorage(grant: StorageGrant): Promise<boolean> {
    return (
      (await this.#run('grantStorage', GRANT_STORAGE, [`bs:${grant.operationId}`, `bsp:${grant.principalId}`], [
        JSON.stringify(grant),
        grant.operationId,
        String(Date.parse(grant.grantedAt)),
      ])) === 1
    );
  }

  async storageGrants(principalId: string): Promise<StorageGrant[]> {
    return ((await this.#run('storageGrants', LIST_STORAGE, [`bsp:${principalId}`], [this.#p])) as string[]).map((g) => JSON.parse(g) as StorageGrant);
  }
}
