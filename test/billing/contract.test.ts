/**
 * One contract for both billing stores (memory, and Redis on a real redis-server): an event is applied
 * once, a principal keeps its first customer, a check is replaced only by a newer one, a checkout request
 * id keeps its first session, an application is decided once, a storage grant is applied once per
 * operation id — and records are handed out as copies.
 */
import { expect } from 'chai';
import { MemoryBillingStore } from '../../src/billing/memory-store.js';
import { RedisBillingStore } from '../../src/billing/redis-store.js';
import type { ApplicationRecord, BillingStore, CheckRecord } from '../../src/billing/store.js';
import { onRedis } from '../helpers/redis-contract.js';

const P = 'did:web:x:tenant:a';

function app(id: string, at: string, principalId = P): ApplicationRecord {
  return {
    id,
    principalId,
    status: 'submitted',
    submittedAt: at,
    decidedAt: null,
    decisionNote: null,
    request: {
      verificationMode: 'card',
      policyVersion: '2026-11',
      consent: { acceptableUse: true, localExecutionBoundary: true },
      authorizedResearch: { authorization: 'owned', targets: [{ kind: 'repository', identifier: 'github.com/a/b' }] },
      purpose: 'review our own code for memory-safety bugs',
      scope: { id: 'owned', tasks: ['code-review'] },
    },
  };
}

const check = (state: CheckRecord['state'], at: number, reason: string | null = null): CheckRecord => ({
  state,
  reason,
  evidenceRef: 'pm_1',
  at,
  expiresAt: null,
});

function contract(name: string, make: () => Promise<{ s: BillingStore; close(): Promise<void> }>) {
  describe(`billing store contract: ${name}`, () => {
    let s: BillingStore;
    let close: () => Promise<void>;
    beforeEach(async () => {
      ({ s, close } = await make());
    });
    afterEach(() => close());

    it('records an event as applied once; the first outcome stands', async () => {
      expect(await s.eventApplied('evt_1')).to.equal(false);
      await s.markEventApplied('evt_1', 'granted');
      await s.markEventApplied('evt_1', 'other');
      expect(await s.eventApplied('evt_1')).to.equal(true);
      expect(await s.eventApplied('evt_2')).to.equal(false);
    });

    it("keeps a principal's first customer, and maps every customer back", async () => {
      expect(await s.customerOf(P)).to.equal(null);
      expect(await s.linkCustomer(P, 'cus_1')).to.equal('cus_1');
      expect(await s.linkCustomer(P, 'cus_2')).to.equal('cus_1');
      expect(await s.customerOf(P)).to.equal('cus_1');
      expect(await s.principalOfCustomer('cus_1')).to.equal(P);
      expect(await s.principalOfCustomer('cus_2')).to.equal(P);
      expect(await s.principalOfCustomer('cus_3')).to.equal(null);
    });

    it('replaces a check only with one reported at the same time or later', async () => {
      expect(await s.putCheck(P, 'card', check('verified', 2000))).to.equal(true);
      expect(await s.putCheck(P, 'card', check('refused', 1000, 'prepaid-card-not-accepted'))).to.equal(false);
      expect((await s.checks(P)).card).to.deep.equal(check('verified', 2000));
      expect(await s.putCheck(P, 'card', check('refused', 3000, 'prepaid-card-not-accepted'))).to.equal(true);
      await s.putCheck(P, 'identity', check('pending', 10));
      const all = await s.checks(P);
      expect(all.card!.state).to.equal('refused');
      expect(all.identity!.state).to.equal('pending');
      expect(all.screening).to.equal(undefined);
      expect(await s.checks('nobody')).to.deep.equal({});
    });

    it('keeps the first checkout of a request id', async () => {
      const first = { sku: 'pro', sessionId: 'cs_1', url: 'https://checkout/1', createdAt: '2026-03-01T00:00:00.000Z' };
      expect(await s.getCheckout(P, 'r1')).to.equal(null);
      expect(await s.putCheckout(P, 'r1', first)).to.deep.equal(first);
      expect(await s.putCheckout(P, 'r1', { ...first, sessionId: 'cs_2' })).to.deep.equal(first);
      expect(await s.getCheckout(P, 'r1')).to.deep.equal(first);
      expect(await s.getCheckout('other', 'r1')).to.equal(null);
    });

    it('lists applications oldest first, by status and by principal', async () => {
      await s.putApplication(app('b', '2026-03-01T10:00:02.000Z'));
      await s.putApplication(app('a', '2026-03-01T10:00:01.000Z', 'did:web:x:tenant:z'));
      await s.putApplication(app('c', '2026-03-01T10:00:03.000Z'));
      expect((await s.listApplications()).map((x) => x.id)).to.deep.equal(['a', 'b', 'c']);
      expect((await s.applicationsOf(P)).map((x) => x.id)).to.deep.equal(['b', 'c']);
      expect(await s.getApplication('b')).to.deep.equal(app('b', '2026-03-01T10:00:02.000Z'));
      expect(await s.getApplication('nope')).to.equal(null);
    });

    it('decides an application once: the second decision changes nothing', async () => {
      await s.putApplication(app('a', '2026-03-01T10:00:01.000Z'));
      const first = await s.decideApplication('a', 'approved', null, '2026-03-02T00:00:00.000Z');
      expect(first!.decided).to.equal(true);
      expect(first!.record.status).to.equal('approved');
      const second = await s.decideApplication('a', 'refused', 'too late', '2026-03-03T00:00:00.000Z');
      expect(second!.decided).to.equal(false);
      expect(second!.record).to.deep.include({ status: 'approved', decidedAt: '2026-03-02T00:00:00.000Z', decisionNote: null });
      expect((await s.listApplications('approved')).map((x) => x.id)).to.deep.equal(['a']);
      expect(await s.listApplications('submitted')).to.deep.equal([]);
      expect(await s.decideApplication('nope', 'refused', 'x', '2026-03-03T00:00:00.000Z')).to.equal(null);
    });

    it('applies a storage grant once per operation id', async () => {
      const g = { operationId: 'op1', principalId: P, microUSD: 25_000_000, grantedAt: '2026-03-01T00:00:00.000Z', expiresAt: '2027-03-01T00:00:00.000Z' };
      expect(await s.grantStorage(g)).to.equal(true);
      expect(await s.grantStorage({ ...g, microUSD: 1 })).to.equal(false);
      expect(await s.storageGrants(P)).to.deep.equal([g]);
      expect(await s.storageGrants('other')).to.deep.equal([]);
    });

    it('hands out copies', async () => {
      await s.putApplication(app('a', '2026-03-01T10:00:01.000Z'));
      const got = (await s.getApplication('a'))!;
      got.request.scope.tasks.push('remediation');
      expect((await s.getApplication('a'))!.request.scope.tasks).to.deep.equal(['code-review']);
    });
  });
}

contract('memory', async () => ({ s: new MemoryBillingStore(), close: async () => {} }));
onRedis('billing store on redis', (connect) => {
  contract('redis', async () => {
    const store = await connect();
    return { s: new RedisBillingStore(store), close: () => store.close() };
  });
});
