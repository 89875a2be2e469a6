/**
 * One contract for both decision stores (memory, and Redis on a real redis-server and a Redis Cluster): a
 * record is stored once by its id, listed by time in a period, gone after its retention; a version's
 * content is stored once under its document and hash; an impact report's candidate is remembered.
 */
import { expect } from 'chai';
import { MemoryDecisionStore } from '../../src/decisions/memory-store.js';
import { RedisDecisionStore } from '../../src/decisions/redis-store.js';
import { pagesOf, type DecisionStore } from '../../src/decisions/store.js';
import type { DecisionRecord } from '../../src/decisions/record.js';
import { onRedis } from '../helpers/redis-contract.js';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const HOUR = 3_600_000;

function rec(n: number, atMs: number): DecisionRecord {
  return {
    decision_id: `dec_call${n}`,
    path: 'admission/decision',
    input: { principal: null, model: 'm', task: 't', scopeId: null, findings: [] },
    result: { allow: true, denials: [], team: 'blue', band: 'b', scope: null, guardrails: { block: [], redact: [], flag: [] } },
    bundles: { admission: { revision: 'a'.repeat(64) } },
    labels: { app: 'portcullis', kind: 'live' },
    timestamp: new Date(atMs).toISOString(),
    erased: ['/input/messages'],
    masked: [],
    call_id: `call${n}`,
    versions: { policy: 'aaaaaaaaaaaa' },
    documents: { policy: 'a'.repeat(64) },
    sizes: { messages: 1, inputChars: 2, inputTokens: 3 },
  };
}

function contract(name: string, make: () => Promise<DecisionStore & { close?(): Promise<void> }>) {
  describe(`decision store contract: ${name}`, () => {
    let s: DecisionStore & { close?(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close?.());

    it('stores a record once by its id and answers it back as stored', async () => {
      expect(await s.get('dec_call1')).to.equal(null);
      await s.put(rec(1, T0), 24 * HOUR, T0);
      await s.put({ ...rec(1, T0), call_id: 'changed' }, 24 * HOUR, T0);
      expect(await s.get('dec_call1')).to.deep.equal(rec(1, T0));
    });

    it('lists the records of a period oldest first, the end excluded, at most `limit`', async () => {
      for (const [n, h] of [
        [3, 3],
        [1, 1],
        [2, 2],
        [4, 4],
      ] as const)
        await s.put(rec(n, T0 + h * HOUR), 48 * HOUR, T0 + 4 * HOUR);
      const ids = (l: DecisionRecord[]) => l.map((r) => r.decision_id);
      expect(ids(await s.list(T0 + HOUR, T0 + 4 * HOUR, 100, T0 + 4 * HOUR))).to.deep.equal(['dec_call1', 'dec_call2', 'dec_call3']);
      expect(ids(await s.list(T0 + 2 * HOUR, T0 + 5 * HOUR, 2, T0 + 4 * HOUR))).to.deep.equal(['dec_call2', 'dec_call3']);
    });

    it('drops a record once its retention has passed', async () => {
      await s.put(rec(1, T0), HOUR, T0);
      await s.put(rec(2, T0 + 2 * HOUR), HOUR, T0 + 2 * HOUR);
      expect((await s.list(0, T0 + 3 * HOUR, 100, T0 + 2 * HOUR)).map((r) => r.decision_id)).to.deep.equal(['dec_call2']);
    });

    it('hands a long period on page by page, every record once, records sharing a millisecond across a page end included', async () => {
      // 25 records; four share the millisecond where the first page of 10 ends.
      const at = (n: number) => T0 + (n >= 8 && n <= 11 ? 8 : n) * 1000;
      for (let n = 0; n < 25; n++) await s.put(rec(n, at(n)), 48 * HOUR, T0);
      const seen: string[] = [];
      for await (const page of pagesOf((f, t, l) => s.list(f, t, l, T0), T0, T0 + HOUR, 10)) {
        expect(page.length).to.be.at.most(10);
        seen.push(...page.map((r) => r.call_id));
      }
      expect(seen.sort()).to.deep.equal(Array.from({ length: 25 }, (_, n) => `call${n}`).sort());
    });

    it('lists `limit` live records when records past their retention still sit before them in time', async () => {
      // One retention (1.5 s), real time (a Redis record expires on Redis's clock), odd milliseconds: a write whose time is a
      // multiple of 16 trims the Redis index, and these must leave it untrimmed, as most writes do.
      const odd = (t: number) => t | 1;
      const t0 = odd(Date.now());
      for (let n = 0; n < 5; n++) await s.put(rec(n, t0 + 2 * n), 1500, t0 + 2 * n);
      await new Promise((r) => setTimeout(r, 1700));
      const t1 = odd(Date.now());
      for (let n = 5; n < 8; n++) await s.put(rec(n, t1 + 2 * n), 1500, t1 + 2 * n);
      const ids = (l: DecisionRecord[]) => l.map((r) => r.decision_id);
      expect(ids(await s.list(0, t1 + HOUR, 3, t1 + 20))).to.deep.equal(['dec_call5', 'dec_call6', 'dec_call7']);
      // Paged, a short page is the end: every live record is still handed on.
      const seen: string[] = [];
      for await (const page of pagesOf((f, t, l) => s.list(f, t, l, t1 + 20), 0, t1 + HOUR, 2)) seen.push(...ids(page));
      expect(seen).to.deep.equal(['dec_call5', 'dec_call6', 'dec_call7']);
    });

    it('keeps a version content once under its document and hash', async () => {
      const v = { document: 'rungs', version: '1', sha256: 'b'.repeat(64), file: 'rules/rungs.yaml', encoding: 'utf8' as const, content: 'version: 1\n' };
      await s.putVersion(v);
      await s.putVersion({ ...v, content: 'other' });
      expect(await s.getVersion('rungs', 'b'.repeat(64))).to.deep.equal(v);
      expect(await s.getVersion('guardrails', 'b'.repeat(64))).to.equal(null);
    });

    it('remembers the candidates an impact report was made for', async () => {
      expect(await s.reported('f'.repeat(64))).to.equal(null);
      await s.noteReport('f'.repeat(64), '2026-03-01T00:00:00.000Z');
      expect(await s.reported('f'.repeat(64))).to.equal('2026-03-01T00:00:00.000Z');
    });
  });
}

contract('memory', async () => new MemoryDecisionStore());
onRedis('decision store contract: redis', (connect) => {
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisDecisionStore(store), { close: () => store.close() });
  });
});
