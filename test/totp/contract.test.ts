/**
 * One contract for both TOTP stores (memory, and Redis on a real redis-server): an enrolment is pending
 * until confirmed and never restarted once active, a time step is accepted once and never an earlier one,
 * a recovery code works once, and wrong codes are counted within their window on the caller's clock.
 */
import { expect } from 'chai';
import { MemoryTotpStore } from '../../src/totp/memory-store.js';
import { RedisTotpStore } from '../../src/totp/redis-store.js';
import type { TotpRecord } from '../../src/totp/store.js';
import type { SealableTotpStore } from '../../src/totp/sealed-store.js';
import { onRedis } from '../helpers/redis-contract.js';

const P = 'did:web:x:tenant:a';
const T0 = 1_900_000_000_000;
const record = (patch: Partial<TotpRecord> = {}): TotpRecord => ({
  principalId: P,
  secret: 'JBSWY3DPEHPK3PXP',
  state: 'pending',
  lastStep: -1,
  createdAt: '2026-11-23T00:00:00.000Z',
  ...patch,
});

function contract(name: string, make: () => Promise<SealableTotpStore & { close(): Promise<void> }>) {
  describe(`totp store contract: ${name}`, () => {
    let s: SealableTotpStore & { close(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('keeps an enrolment pending until confirmed; a pending one may restart, an active one may not', async () => {
      expect(await s.get(P)).to.equal(null);
      expect(await s.begin(record())).to.equal(true);
      expect(await s.get(P)).to.deep.equal(record());
      expect(await s.begin(record({ secret: 'KRSXG5CTMVRXEZLU' }))).to.equal(true);
      expect((await s.get(P))!.secret).to.equal('KRSXG5CTMVRXEZLU');
      expect(await s.useStep(P, 5)).to.equal(false); // pending: no code signs in
      expect(await s.activate(P, 100, ['h1', 'h2'])).to.equal(true);
      expect(await s.activate(P, 100, ['h3'])).to.equal(false);
      expect(await s.get(P)).to.deep.include({ state: 'active', lastStep: 100 });
      expect(await s.begin(record())).to.equal(false);
      expect((await s.get(P))!.secret).to.equal('KRSXG5CTMVRXEZLU');
    });

    it('accepts a step once, and never an earlier one', async () => {
      await s.begin(record());
      await s.activate(P, 100, []);
      expect(await s.useStep(P, 100)).to.equal(false);
      expect(await s.useStep(P, 101)).to.equal(true);
      expect(await s.useStep(P, 101)).to.equal(false);
      expect(await s.useStep(P, 99)).to.equal(false);
      const racing = await Promise.all(Array.from({ length: 6 }, () => s.useStep(P, 102)));
      expect(racing.filter(Boolean)).to.have.length(1);
      expect(await s.useStep('did:web:x:tenant:none', 1)).to.equal(false);
    });

    it('uses a recovery code once', async () => {
      await s.begin(record());
      await s.activate(P, 1, ['h1', 'h2']);
      expect(await s.recoveryCodesLeft(P)).to.equal(2);
      expect(await s.useRecoveryCode(P, 'h1')).to.equal(true);
      expect(await s.useRecoveryCode(P, 'h1')).to.equal(false);
      expect(await s.useRecoveryCode(P, 'nope')).to.equal(false);
      expect(await s.recoveryCodesLeft(P)).to.equal(1);
    });

    it('replaces a secret only while it is still the one expected, and lists every enrolled principal once', async () => {
      const Q = 'did:web:x:tenant:b}{odd:id';
      await s.begin(record());
      await s.begin(record({ principalId: Q }));
      expect(await s.replaceSecret(P, 'not-it', 'sealed-1')).to.equal(false);
      expect(await s.replaceSecret(P, 'JBSWY3DPEHPK3PXP', 'sealed-1')).to.equal(true);
      expect((await s.get(P))!.secret).to.equal('sealed-1');
      expect(await s.replaceSecret('did:web:x:tenant:nobody', 'x', 'y')).to.equal(false);
      expect(await s.get('did:web:x:tenant:nobody')).to.equal(null);
      await s.activate(P, 1, ['h1']);
      await s.failure(P, T0, 60_000);
      const listed: string[] = [];
      for await (const id of s.principals()) listed.push(id);
      expect(listed.sort()).to.deep.equal([P, Q].sort());
    });

    it('counts wrong codes within their window, and forgets them after it or when cleared', async () => {
      expect(await s.failure(P, T0, 60_000)).to.equal(1);
      expect(await s.failure(P, T0 + 1000, 60_000)).to.equal(2);
      expect(await s.failures(P, T0 + 59_999)).to.equal(2);
      expect(await s.failures(P, T0 + 60_000)).to.equal(0);
      expect(await s.failure(P, T0 + 60_000, 60_000)).to.equal(1);
      await s.clearFailures(P);
      expect(await s.failures(P, T0 + 60_001)).to.equal(0);
    });
  });
}

contract('memory', async () => Object.assign(new MemoryTotpStore(), { close: async () => {} }));

onRedis('totp store on redis', (connect) =>
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisTotpStore(store), { close: () => store.close() });
  }),
);
