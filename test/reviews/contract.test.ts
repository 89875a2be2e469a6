/**
 * One contract for both review stores (memory, and Redis on a real redis-server): an entry is recorded
 * once per call id, listed under its day oldest first, paged by offset and limit with the day's total,
 * and handed out as a copy.
 */
import { expect } from 'chai';
import { MemoryReviewStore } from '../../src/reviews/memory-store.js';
import { RedisReviewStore } from '../../src/reviews/redis-store.js';
import type { ReviewEntry, ReviewStore } from '../../src/reviews/store.js';
import { onRedis } from '../helpers/redis-contract.js';

function entry(callId: string, at: string, patch: Partial<ReviewEntry> = {}): ReviewEntry {
  return {
    callId,
    principalId: 'did:web:x:tenant:a',
    receiptId: `rcpt_${callId}`,
    rules: ['pii-passkeys'],
    findings: [{ rule: 'pii-passkeys', detector: 'key-references', where: 'messages[0].content' }],
    model: 'shared-general-a',
    task: 'code-review',
    at,
    day: at.slice(0, 10),
    ...patch,
  };
}

function contract(name: string, make: () => Promise<ReviewStore & { close(): Promise<void> }>) {
  describe(`review store contract: ${name}`, () => {
    let s: ReviewStore & { close(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('lists a day oldest first, whatever the order of recording', async () => {
      await s.record(entry('c', '2026-03-01T10:00:03.000Z'));
      await s.record(entry('a', '2026-03-01T10:00:01.000Z'));
      await s.record(entry('b', '2026-03-01T10:00:02.000Z'));
      const page = await s.list('2026-03-01');
      expect(page.total).to.equal(3);
      expect(page.offset).to.equal(0);
      expect(page.data.map((e) => e.callId)).to.deep.equal(['a', 'b', 'c']);
      expect(page.data[0]).to.deep.equal(entry('a', '2026-03-01T10:00:01.000Z'));
    });

    it('records once per call id: a second record changes nothing', async () => {
      await s.record(entry('a', '2026-03-01T10:00:01.000Z'));
      await s.record(entry('a', '2026-03-01T11:00:00.000Z', { rules: ['other'] }));
      const page = await s.list('2026-03-01');
      expect(page.total).to.equal(1);
      expect(page.data[0]!.rules).to.deep.equal(['pii-passkeys']);
    });

    it('keeps days apart, and an unknown day is empty', async () => {
      await s.record(entry('a', '2026-03-01T23:59:59.999Z'));
      await s.record(entry('b', '2026-03-02T00:00:00.000Z'));
      await s.record(entry('c', '2026-03-02T00:00:01.000Z', { day: '2026-03-01' }));
      expect((await s.list('2026-03-01')).data.map((e) => e.callId)).to.deep.equal(['a', 'c']);
      expect((await s.list('2026-03-02')).data.map((e) => e.callId)).to.deep.equal(['b']);
      expect(await s.list('2026-03-03')).to.deep.equal({ day: '2026-03-03', total: 0, offset: 0, data: [] });
    });

    it('pages by offset and limit, with the total of the day; equal times order by call id', async () => {
      for (const id of ['e', 'd', 'c', 'b', 'a']) await s.record(entry(id, '2026-03-01T10:00:00.000Z'));
      const first = await s.list('2026-03-01', 0, 2);
      const second = await s.list('2026-03-01', 2, 2);
      const last = await s.list('2026-03-01', 4, 2);
      expect([first, second, last].map((p) => p.data.map((e) => e.callId))).to.deep.equal([['a', 'b'], ['c', 'd'], ['e']]);
      expect([first, second, last].map((p) => p.total)).to.deep.equal([5, 5, 5]);
      expect((await s.list('2026-03-01', 9, 2)).data).to.deep.equal([]);
      expect(await s.list('2026-03-01', 0, 0)).to.deep.equal({ day: '2026-03-01', total: 5, offset: 0, data: [] });
    });

    it('hands out copies', async () => {
      const e = entry('a', '2026-03-01T10:00:00.000Z');
      await s.record(e);
      e.rules.push('changed');
      const read = (await s.list('2026-03-01')).data[0]!;
      read.rules.push('changed too');
      expect((await s.list('2026-03-01')).data[0]!.rules).to.deep.equal(['pii-passkeys']);
    });
  });
}

contract('memory', async () => Object.assign(new MemoryReviewStore(), { close: async () => {} }));

onRedis('review store on redis', (connect) =>
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisReviewStore(store), { close: () => store.close() });
  }),
);
