/**
 * The store contract: one suite, run against every implementation (memory, and Redis against a real
 * redis-server of our own), so the embedded default and the shared store cannot drift apart. What only the
 * Redis store can show (wire round trips, durability, outages) lives in `redis.test.ts`.
 */
import { expect } from 'chai';
import { MemoryStore } from '../../src/store/memory.js';
import { RedisStore } from '../../src/store/redis.js';
import { StoreConflict, StoreUnavailable } from '../../src/store/errors.js';
import type { PrincipalRecord, Receipt, ScopeGrant, Store, TokenRecord } from '../../src/store/store.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { onRedisCluster, sharedCluster } from '../helpers/redis-contract.js';
import { RedisMeter } from '../../src/metering/redis-meter.js';
import { RedisSessionStore } from '../../src/sessions/redis-store.js';

// Fixtures -------------------------------------------------------------------------------------------------

const PID = 'did:web:portcullis.test:tenant:alice';
const OTHER = 'did:web:portcullis.test:tenant:bob';

function principal(id = PID, scopes: ScopeGrant[] = []): PrincipalRecord {
  const username = id.split(':').pop() ?? id;
  return { id, username, createdAt: '2025-01-01T00:00:00.000Z', rung: null, aup: null, scopes };
}

function scope(id: string, tasks: string[] = ['code-review'], status: ScopeGrant['status'] = 'approved'): ScopeGrant {
  return { id, status, tasks, approvedAt: '2025-01-02T00:00:00.000Z' };
}

const rung = (id: string) => ({
  id,
  grantedAt: '2025-01-03T00:00:00.000Z',
  expiresAt: '2026-01-03T00:00:00.000Z',
  source: 'operator',
});
const aup = (version: string) => ({ version, at: '2025-01-03T00:00:00.000Z' });

function token(id: string, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id,
    principalId: PID,
    label: `label ${id}`,
    format: 'v2',
    hash: `hash-${id}`,
    createdAt: '2025-01-04T00:00:00.000Z',
    revokedAt: null,
    ...overrides,
  };
}

function receipt(id: string, extra: Record<string, unknown> = {}): Receipt {
  return { id, principalId: PID, createdAt: '2025-01-05T00:00:00.000Z', ...extra };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

// The contract ---------------------------------------------------------------------------------------------

interface Harness {
  /** A fresh, empty store for one test. */
  open(): Promise<Store>;
}

function storeContract(name: string, harness: Harness): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await harness.open();
    });
    afterEach(async () => {
      await store.close();
    });

    describe('principals', () => {
      it('creates a principal and reads it back as written', async () => {
        const written = principal(PID, [scope('owned')]);
        await store.createPrincipal(written);
        expect(await store.getPrincipal(PID)).to.deep.equal(written);
      });

      it('lists every principal once, page by page, and only principals', async () => {
        const ids = Array.from({ length: 25 }, (_, i) => `did:web:portcullis.test:tenant:p${String(i).padStart(2, '0')}`);
        for (const id of ids) await store.createPrincipal(principal(id));
        await store.putToken(token('tok-list', { principalId: ids[0]! }));
        const seen: string[] = [];
        let cursor: string | null = null;
        for (let pages = 0; pages < 100; pages++) {
          const page: { ids: string[]; next: string | null } = await store.listPrincipals(cursor, 4);
          seen.push(...page.ids);
          cursor = page.next;
          if (cursor === null) break;
        }
        expect(cursor).to.equal(null);
        expect([...seen].sort()).to.deep.equal(ids);
      });

      it('answers null for an unknown principal', async () => {
        expect(await store.getPrincipal('did:web:portcullis.test:tenant:nobody')).to.equal(null);
      });

      it('refuses a second create of the same id with StoreConflict and keeps the first', async () => {
        await store.createPrincipal(principal());
        const err = await rejection(store.createPrincipal({ ...principal(), username: 'impostor' }));
        expect(err).to.be.instanceOf(StoreConflict);
        expect((await store.getPrincipal(PID))?.username).to.equal('alice');
      });

      it('lets exactly one of many parallel creates of one id win', async () => {
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.createPrincipal({ ...principal(), username: `u${i}` })));
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).to.have.length(1);
        expect(lost).to.have.length(19);
        for (const r of lost) expect(r.reason).to.be.instanceOf(StoreConflict);
      });

      it('sets the rung and the AUP consent that came with it, returning the updated record', async () => {
        await store.createPrincipal(principal(PID, [scope('owned')]));
        const updated = await store.setRung(PID, rung('L1'), aup('2025-01'));
        expect(updated).to.deep.equal({ ...principal(PID, [scope('owned')]), rung: rung('L1'), aup: aup('2025-01') });
        expect(await store.getPrincipal(PID)).to.deep.equal(updated);
      });

      it('keeps the recorded AUP consent when a rung arrives without one', async () => {
        await store.createPrincipal(principal());
        await store.setRung(PID, rung('L1'), aup('2025-01'));
        const updated = await store.setRung(PID, rung('L3'), null);
        expect(updated?.rung).to.deep.equal(rung('L3'));
        expect(updated?.aup).to.deep.equal(aup('2025-01'));
      });

      it('answers null to setRung and putScope for an unknown principal, creating nothing', async () => {
        expect(await store.setRung(PID, rung('L1'), null)).to.equal(null);
        expect(await store.putScope(PID, scope('owned'))).to.equal(null);
        expect(await store.getPrincipal(PID)).to.equal(null);
        await store.createPrincipal(principal()); // the failed writes left nothing behind to conflict with
      });

      it('adds scopes in approval order and replaces one by id in its place', async () => {
        await store.createPrincipal(principal(PID, [scope('a'), scope('b')]));
        await store.putScope(PID, scope('c'));
        const updated = await store.putScope(PID, scope('b', ['vulnerability-triage'], 'revoked'));
        const replaced = scope('b', ['vulnerability-triage'], 'revoked');
        expect(updated?.scopes).to.deep.equal([scope('a'), replaced, scope('c')]);
        expect((await store.getPrincipal(PID))?.scopes).to.deep.equal(updated?.scopes);
      });

      it('collapses duplicate scope ids given at create the way putScope would', async () => {
        await store.createPrincipal(principal(PID, [scope('a'), scope('b'), scope('a', ['remediation'])]));
        expect((await store.getPrincipal(PID))?.scopes).to.deep.equal([scope('a', ['remediation']), scope('b')]);
      });
    });

    describe('tokens', () => {
      beforeEach(async () => {
        await store.createPrincipal(principal(PID, [scope('owned')]));
        await store.createPrincipal(principal(OTHER));
      });

      it('identifies a token by its hash: token, principal and the legacy flag', async () => {
        await store.putToken(token('t1'));
        expect(await store.identify('hash-t1')).to.deep.equal({
          token: token('t1'),
          principal: principal(PID, [scope('owned')]),
          legacyRevoked: false,
        });
      });

      it('answers null for an unknown hash', async () => {
        expect(await store.identify('hash-nobody')).to.equal(null);
      });

      it('sees principal changes made after the token was stored (nothing cached)', async () => {
        await store.putToken(token('t1'));
        await store.putScope(PID, scope('lab', ['remediation']));
        await store.setRung(PID, rung('L3'), aup('2025-01'));
        const identity = await store.identify('hash-t1');
        expect(identity?.principal.scopes.map((s) => s.id)).to.deep.equal(['owned', 'lab']);
        expect(identity?.principal.rung?.id).to.equal('L3');
      });

      it('refuses a token whose id or hash is already stored, leaving the first intact', async () => {
        await store.putToken(token('t1'));
        const sameId = token('t1', { hash: 'hash-other' });
        const sameHash = token('t2', { hash: 'hash-t1', principalId: OTHER });
        expect(await rejection(store.putToken(sameId))).to.be.instanceOf(StoreConflict);
        expect(await rejection(store.putToken(sameHash))).to.be.instanceOf(StoreConflict);
        expect((await store.identify('hash-t1'))?.token).to.deep.equal(token('t1'));
        expect(await store.identify('hash-other')).to.equal(null);
        expect(await store.listTokens(OTHER)).to.deep.equal([]);
      });

      it('lists a principal’s tokens in creation order, and only theirs', async () => {
        await store.putToken(token('t1'));
        await store.putToken(token('x1', { principalId: OTHER }));
        await store.putToken(token('t2', { format: 'v1' }));
        await store.putToken(token('t3'));
        expect(await store.listTokens(PID)).to.deep.equal([token('t1'), token('t2', { format: 'v1' }), token('t3')]);
        expect(await store.listTokens(OTHER)).to.deep.equal([token('x1', { principalId: OTHER })]);
        expect(await store.listTokens('did:web:portcullis.test:tenant:nobody')).to.deep.equal([]);
      });

      it('revokes a token once: the first time stands, a second revoke is a no-op', async () => {
        await store.putToken(token('t1'));
        const first = await store.revokeToken('t1', '2025-02-01T00:00:00.000Z');
        expect(first).to.deep.equal(token('t1', { revokedAt: '2025-02-01T00:00:00.000Z' }));
        const second = await store.revokeToken('t1', '2025-03-01T00:00:00.000Z');
        expect(second).to.deep.equal(first);
        expect((await store.identify('hash-t1'))?.token.revokedAt).to.equal('2025-02-01T00:00:00.000Z');
        expect(await store.listTokens(PID)).to.deep.equal([first]);
      });

      it('answers null when revoking an unknown token id', async () => {
        expect(await store.revokeToken('nope', '2025-02-01T00:00:00.000Z')).to.equal(null);
        expect(await store.listTokens(PID)).to.deep.equal([]);
      });

      it('keeps a token stored as already revoked revoked', async () => {
        await store.putToken(token('t1', { revokedAt: '2025-01-10T00:00:00.000Z' }));
        expect((await store.identify('hash-t1'))?.token.revokedAt).to.equal('2025-01-10T00:00:00.000Z');
      });
    });

    describe('legacy bulk revocation', () => {
      beforeEach(async () => {
        await store.createPrincipal(principal());
        await store.createPrincipal(principal(OTHER));
        await store.putToken(token('old1', { format: 'v1' }));
        await store.putToken(token('old2', { format: 'v1', principalId: OTHER }));
        await store.putToken(token('old3', { format: 'v1', revokedAt: '2025-01-09T00:00:00.000Z' }));
        await store.putToken(token('new1'));
      });

      it('revokes every active v1 token, counts them, and raises the flag', async () => {
        const at = '2025-02-01T00:00:00.000Z';
        expect(await store.revokeLegacyTokens(at)).to.equal(2);
        expect((await store.identify('hash-old1'))?.token.revokedAt).to.equal(at);
        expect((await store.identify('hash-old2'))?.token.revokedAt).to.equal(at);
        expect((await store.identify('hash-old3'))?.token.revokedAt).to.equal('2025-01-09T00:00:00.000Z');
        const v2 = await store.identify('hash-new1');
        expect(v2?.token.revokedAt).to.equal(null);
        expect(v2?.legacyRevoked).to.equal(true);
        expect((await store.identify('hash-old1'))?.legacyRevoked).to.equal(true);
      });

      it('counts nothing the second time, and v1 tokens stored later are caught by the next call', async () => {
        expect(await store.revokeLegacyTokens('2025-02-01T00:00:00.000Z')).to.equal(2);
        expect(await store.revokeLegacyTokens('2025-02-02T00:00:00.000Z')).to.equal(0);
        await store.putToken(token('late', { format: 'v1' }));
        expect((await store.identify('hash-late'))?.legacyRevoked).to.equal(true);
        expect(await store.revokeLegacyTokens('2025-02-03T00:00:00.000Z')).to.equal(1);
      });
    });

    describe('receipts', () => {
      it('writes a receipt and reads it back with every field, and its index in the receipt log', async () => {
        const written = receipt('call-1', { billing: 'paid', chargedMicroUSD: 1234, usage: { input: 10, output: 5 } });
        await store.putReceipt(written);
        expect(await store.getReceipt('call-1')).to.deep.equal({ ...written, logIndex: 0 });
        await store.putReceipt(receipt('call-2'));
        expect(await store.getReceipt('call-2')).to.deep.equal({ ...receipt('call-2'), logIndex: 1 });
      });

      it('writes once: a second write with the same id is ignored', async () => {
        await store.putReceipt(receipt('call-1', { chargedMicroUSD: 1 }));
        await store.putReceipt(receipt('call-1', { chargedMicroUSD: 999 }));
        expect((await store.getReceipt('call-1'))?.['chargedMicroUSD']).to.equal(1);
      });

      it('answers null for an unknown receipt', async () => {
        expect(await store.getReceipt('call-none')).to.equal(null);
      });

      it('lists a principal’s receipts of one UTC day in createdAt order, by `day` when given', async () => {
        await store.putReceipt({ id: 'r-late', principalId: PID, createdAt: '2025-01-05T23:00:00.000Z' });
        await store.putReceipt({ id: 'r-early', principalId: PID, createdAt: '2025-01-05T01:00:00.000Z' });
        await store.putReceipt({ id: 'r-next', principalId: PID, createdAt: '2025-01-05T23:59:00.000Z', day: '2025-01-06' });
        await store.putReceipt({ id: 'r-bob', principalId: OTHER, createdAt: '2025-01-05T02:00:00.000Z' });
        await store.putReceipt({ id: 'r-early', principalId: PID, createdAt: '2025-01-05T00:00:00.000Z', changed: true });
        expect((await store.listReceipts(PID, '2025-01-05')).map((r) => r.id)).to.deep.equal(['r-early', 'r-late']);
        expect((await store.listReceipts(PID, '2025-01-06')).map((r) => r.id)).to.deep.equal(['r-next']);
        expect((await store.listReceipts(OTHER, '2025-01-05')).map((r) => r.id)).to.deep.equal(['r-bob']);
        expect(await store.listReceipts(PID, '2025-01-07')).to.deep.equal([]);
        expect((await store.listReceipts(PID, '2025-01-05'))[0]).to.not.have.property('changed');
      });
    });

    describe('copies', () => {
      it('hands out principals that cannot change what is stored', async () => {
        await store.createPrincipal(principal(PID, [scope('owned')]));
        await store.putToken(token('t1'));
        const handedOut = [
          await store.getPrincipal(PID),
          await store.setRung(PID, rung('L1'), aup('v1')),
          await store.putScope(PID, scope('lab')),
          (await store.identify('hash-t1'))?.principal,
        ];
        const before = await store.getPrincipal(PID);
        for (const p of handedOut) {
          if (!p) throw new Error('expected a principal');
          p.username = 'mallory';
          p.scopes.push(scope('stolen', ['payload-crafting']));
          const first = p.scopes[0];
          if (first) first.tasks.push('c2-tooling');
          if (p.rung) p.rung.expiresAt = '2999-01-01T00:00:00.000Z';
        }
        expect(await store.getPrincipal(PID)).to.deep.equal(before);
      });

      it('keeps its own copy of what it was given', async () => {
        const p = principal(PID, [scope('owned')]);
        const t = token('t1');
        const r = receipt('call-1', { usage: { input: 1 } });
        const s = scope('lab');
        await store.createPrincipal(p);
        await store.putToken(t);
        await store.putReceipt(r);
        await store.putScope(PID, s);
        p.username = 'mallory';
        p.scopes[0]?.tasks.push('payload-crafting');
        t.principalId = OTHER;
        (r['usage'] as { input: number }).input = 0;
        s.tasks.push('c2-tooling');
        const stored = await store.getPrincipal(PID);
        expect(stored?.username).to.equal('alice');
        expect(stored?.scopes).to.deep.equal([scope('owned'), scope('lab')]);
        expect((await store.identify('hash-t1'))?.token.principalId).to.equal(PID);
        expect(await store.getReceipt('call-1')).to.deep.equal(receipt('call-1', { usage: { input: 1 }, logIndex: 0 }));
      });

      it('hands out tokens and receipts that cannot change what is stored', async () => {
        await store.createPrincipal(principal());
        await store.putToken(token('t1'));
        await store.putReceipt(receipt('call-1', { usage: { input: 1 } }));
        const listed = await store.listTokens(PID);
        const revoked = await store.revokeToken('t1', '2025-02-01T00:00:00.000Z');
        const got = await store.getReceipt('call-1');
        if (listed[0]) listed[0].principalId = OTHER;
        if (revoked) revoked.revokedAt = null;
        if (got) (got['usage'] as { input: number }).input = 0;
        expect((await store.identify('hash-t1'))?.token.revokedAt).to.equal('2025-02-01T00:00:00.000Z');
        expect((await store.listTokens(PID))[0]?.principalId).to.equal(PID);
        expect((await store.getReceipt('call-1'))?.['usage']).to.deep.equal({ input: 1 });
      });
    });

    describe('concurrency', () => {
      beforeEach(async () => {
        await store.createPrincipal(principal());
      });

      it('keeps all of 50 parallel putScope calls with distinct ids', async () => {
        const ids = Array.from({ length: 50 }, (_, i) => `scope-${i}`);
        await Promise.all(ids.map((id) => store.putScope(PID, scope(id))));
        const stored = (await store.getPrincipal(PID))?.scopes.map((s) => s.id) ?? [];
        expect([...stored].sort()).to.deep.equal([...ids].sort());
      });

      it('loses neither a rung nor a scope when setRung and putScope race', async () => {
        const calls: Promise<unknown>[] = [];
        for (let i = 0; i < 25; i += 1) {
          calls.push(store.putScope(PID, scope(`scope-${i}`)));
          calls.push(store.setRung(PID, rung(`L${i}`), aup(`v${i}`)));
        }
        await Promise.all(calls);
        const stored = await store.getPrincipal(PID);
        expect(stored?.scopes).to.have.length(25);
        expect(stored?.rung?.id).to.match(/^L\d+$/);
        expect(stored?.aup?.version).to.match(/^v\d+$/);
      });

      it('counts each legacy token once across parallel bulk revocations', async () => {
        for (let i = 0; i < 10; i += 1) await store.putToken(token(`old${i}`, { format: 'v1' }));
        const at = '2025-02-01T00:00:00.000Z';
        const counts = await Promise.all(Array.from({ length: 5 }, () => store.revokeLegacyTokens(at)));
        expect(counts.reduce((a, b) => a + b, 0)).to.equal(10);
      });

      it('keeps exactly one of many parallel writes of one receipt', async () => {
        await Promise.all(Array.from({ length: 20 }, (_, i) => store.putReceipt(receipt('call-1', { n: i }))));
        const first = await store.getReceipt('call-1');
        expect(first?.['n']).to.be.a('number');
        await store.putReceipt(receipt('call-1', { n: -1 }));
        expect(await store.getReceipt('call-1')).to.deep.equal(first);
      });
    });

    describe('lifecycle', () => {
      it('answers ping while open and refuses calls with StoreUnavailable once closed', async () => {
        await store.ping();
        await store.close();
        expect(await rejection(store.getPrincipal(PID))).to.be.instanceOf(StoreUnavailable);
        expect(await rejection(store.ping())).to.be.instanceOf(StoreUnavailable);
      });
    });
  });
}

// The implementations --------------------------------------------------------------------------------------

storeContract('memory', { open: async () => new MemoryStore() });

describe('against a private redis-server', () => {
  let server: RedisServer;
  let n = 0;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.stop();
  });
  // One server for the whole suite; a fresh key prefix per test keeps tests apart without FLUSHALL.
  storeContract('redis', {
    open: () => RedisStore.connect({ url: server.url, keyPrefix: `contract-${(n += 1)}:` }),
  });
});

// The same contract through the cluster client, on a real three-master Redis Cluster.
onRedisCluster('against a redis cluster', (connect) => storeContract('redis cluster', { open: connect }));

describe('key layout on a redis cluster', function () {
  this.timeout(60_000);

  /** Every key of the cluster's masters that contains `marker`, with its slot. */
  async function keysWith(marker: string): Promise<Array<{ key: string; slot: number }>> {
    const cluster = await sharedCluster();
    const out: Array<{ key: string; slot: number }> = [];
    for (const s of cluster.servers) {
      for (const key of (await cluster.cli(s.port, '--scan', '--pattern', `*${marker}*`)).split('\n').filter(Boolean)) {
        out.push({ key, slot: Number((await cluster.cli(s.port, 'CLUSTER', 'KEYSLOT', key)).trim()) });
      }
    }
    return out;
  }

  async function writeSome(store: RedisStore, id: string): Promise<void> {
    await store.createPrincipal(principal(id));
    await store.putToken(token(`tok-${id.length}-${Date.now()}`, { principalId: id, hash: `h-${id}-${Date.now()}` }));
    await new RedisMeter(store, {}).grant({ operationId: `op-${id}`, principalId: id, kind: 'credits', microUSD: 1, source: 'test' });
    const now = Date.now();
    await new RedisSessionStore(store).create(
      { hash: `s-${id}`, principalId: id, method: 'passkey', state: 'active', createdAt: now, lastSeenAt: now, expiresAt: now + 60_000 },
      60_000,
    );
  }

  it('puts the money in one slot and each other family in a slot of its own', async () => {
    const cluster = await sharedCluster();
    const store = await RedisStore.connect({ clusterNodes: cluster.seeds, keyPrefix: 'layout:' });
    try {
      await writeSome(store, 'did:web:portcullis.test:tenant:layout-a');
      await writeSome(store, 'did:web:portcullis.test:tenant:layout-b');
    } finally {
      await store.close();
    }
    const keys = await keysWith('layout');
    const slotsOf = (tag: string) => new Set(keys.filter((k) => k.key.startsWith(`{${tag}}:`)).map((k) => k.slot));
    expect(
      keys.every((k) => /^\{layout(:[a-z]+)?\}:/.test(k.key)),
      keys.map((k) => k.key).join(' '),
    ).to.equal(true);
    for (const family of ['layout', 'layout:id', 'layout:ses']) expect(slotsOf(family).size, family).to.equal(1);
    const slots = ['layout', 'layout:id', 'layout:ses'].map((f) => [...slotsOf(f)][0]);
    expect(new Set(slots).size, 'three families, three slots').to.equal(3);
  });

  it("keeps every family in one slot when the operator's prefix holds its own tag", async () => {
    const cluster = await sharedCluster();
    const store = await RedisStore.connect({ clusterNodes: cluster.seeds, keyPrefix: '{acme}:' });
    try {
      await writeSome(store, 'did:web:portcullis.test:tenant:acme-a');
    } finally {
      await store.close();
    }
    const keys = await keysWith('acme');
    expect(keys.length).to.be.at.least(6);
    expect(new Set(keys.map((k) => k.slot)).size, keys.map((k) => k.key).join(' ')).to.equal(1);
  });
});
