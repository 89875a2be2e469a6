/**
 * The receipt log contract, run against the memory store and against Redis (a real redis-server): leaves are
 * sequenced by the store's receipt write, once per receipt; the signer (checkpointer.ts) holding the lease
 * integrates them and signs checkpoints; proofs come from the stored subtree hashes. Every proof of logs of
 * 1 to 70 receipts and of 3000 is checked by our verifier and by Go's sumdb/tlog; the lease admits one
 * signer at a time, a stale or lease-less signer cannot move the head, and a lapsed lease is taken over.
 */
import { expect } from 'chai';
import { MemoryStore } from '../../src/store/memory.js';
import type { Receipt, Store } from '../../src/store/store.js';
import { ephemeralReceiptKey } from '../../src/receipts/key.js';
import { Checkpointer } from '../../src/receipts/checkpointer.js';
import { receiptLogFor as logFor } from '../../src/app/wire.js';
import { consistency, withProof } from '../../src/receipts/proofs.js';
import { canonicalReceipt, receiptLeafHash } from '../../src/receipts/canonical.js';
import { openCheckpoint, verifierKey } from '../../src/receipts/note.js';
import { verifyConsistencyBundle, verifyReceiptBundle } from '../../src/receipts/verify.js';
import { silentLogger } from '../../src/log.js';
import { onRedis } from '../helpers/redis-contract.js';
import { tlogCheck } from '../helpers/tlogcheck.js';
import type { ReceiptLog } from '../../src/receipts/log.js';
import { tileNodes, tilePath } from '../../src/receipts/tiles.js';
import { until } from '../helpers/wait.js';

const ORIGIN = 'portcullis.test/receipts';
const PID = 'did:web:portcullis.test:tenant:alice';
const receipt = (i: number): Receipt => ({
  id: `rcpt_${i}`,
  principalId: PID,
  createdAt: '2030-03-14T12:00:00.000Z',
  outcome: 'answered',
  chargedMicroUSD: i * 7,
});

function logContract(name: string, open: () => Promise<Store>) {
  describe(`receipt log contract: ${name}`, function () {
    this.timeout(120_000);
    let store: Store;
    let log: ReceiptLog;
    const key = ephemeralReceiptKey();
    const signer = (leaseMs = 5000) => new Checkpointer(log, key, { origin: ORIGIN, everyMs: Math.min(1000, leaseMs), leaseMs, log: silentLogger });

    beforeEach(async () => {
      store = await open();
      log = logFor(store);
    });
    afterEach(() => store.close());

    it('signs the empty log first, then covers each receipt; every proof checks here and in Go’s tlog (1 to 70)', async () => {
      const s = signer();
      expect(await s.tick()).to.equal(0);
      const empty = openCheckpoint((await log.checkpoint())!.note, key.publicKey, ORIGIN);
      expect(empty.ok && empty.checkpoint.size).to.equal(0);
      const notes: string[] = [];
      const inclusion: Array<{ index: number; size: number; proof: string[] }> = [];
      const consistencyProofs: Array<{ from: number; to: number; proof: string[] }> = [];
      for (let size = 1; size <= 70; size += 1) {
        await store.putReceipt(receipt(size - 1));
        // Sequenced at once, pending until a checkpoint covers it.
        expect(await withProof(log, (await store.getReceipt(`rcpt_${size - 1}`))!)).to.include({ logIndex: size - 1, pending: true });
        expect(await s.tick()).to.equal(size);
        const cp = (await log.checkpoint())!;
        notes.push(cp.note);
        for (let index = 0; index < size; index += 1) {
          const served = (await withProof(log, (await store.getReceipt(`rcpt_${index}`))!)) as Record<string, any>;
          const ours = verifyReceiptBundle(served, key.publicKey);
          expect(ours.ok, `leaf ${index} of ${size}`).to.equal(true);
          inclusion.push({ index, size, proof: served['inclusionProof'] });
        }
        for (let from = 1; from <= size; from += 1) {
          const proof = await consistency(log, from, size);
          expect(verifyConsistencyBundle(notes[from - 1]!, cp.note, proof, key.publicKey).ok, `${from} -> ${size}`).to.equal(true);
          consistencyProofs.push({ from, to: size, proof });
        }
      }
      const records = await Promise.all(
        Array.from({ length: 70 }, async (_, i) => canonicalReceipt((await store.getReceipt(`rcpt_${i}`))!).toString('base64')),
      );
      const go = await tlogCheck({ vkey: verifierKey(ORIGIN, key.publicKey), records, checkpoints: notes, inclusion, consistency: consistencyProofs });
      expect(go.errors).to.equal(null);
      expect(go.checked).to.deep.equal({ checkpoints: 70, inclusion: 2485, consistency: 2485 });
    });

    it('sequences a receipt once, whatever retries, and the stored receipt hashes to its leaf', async () => {
      await store.putReceipt(receipt(0));
      await store.putReceipt({ ...receipt(0), chargedMicroUSD: 999 });
      await store.putReceipt(receipt(1));
      const s = signer();
      expect(await s.tick()).to.equal(2);
      const [a, b] = [(await store.getReceipt('rcpt_0'))!, (await store.getReceipt('rcpt_1'))!];
      expect([a['logIndex'], b['logIndex'], a['chargedMicroUSD']]).to.deep.equal([0, 1, 0]);
      expect((await log.nodes([{ level: 0, index: 0 }]))[0]).to.deep.equal(receiptLeafHash(a));
    });

    it('covers a backlog of 3000 receipts in batches, proves each and serves its hash tiles (checked in Go’s tlog)', async () => {
      for (let i = 0; i < 3000; i += 1) await store.putReceipt(receipt(i));
      const s = new Checkpointer(log, key, { origin: ORIGIN, everyMs: 1000, leaseMs: 5000, batch: 1000, log: silentLogger });
      expect(await s.tick()).to.equal(3000);
      const cp = (await log.checkpoint())!;
      const inclusion: Array<{ index: number; size: number; proof: string[] }> = [];
      const records: string[] = [];
      for (let index = 0; index < 3000; index += 1) {
        const served = (await withProof(log, (await store.getReceipt(`rcpt_${index}`))!)) as Record<string, any>;
        expect(served['checkpoint']).to.equal(cp.note);
        expect(verifyReceiptBundle(served, key.publicKey).ok).to.equal(true);
        inclusion.push({ index, size: 3000, proof: served['inclusionProof'] });
        records.push(canonicalReceipt(served).toString('base64'));
      }
      // The hash tiles (C2SP tlog-tiles) of that tree: 11 full and one partial at level 0, one partial at
      // level 1; none beyond the checkpoint.
      const refs = [
        ...Array.from({ length: 11 }, (_, index) => ({ level: 0, index, width: 256 })),
        { level: 0, index: 11, width: 184 },
        { level: 1, index: 0, width: 11 },
      ];
      const tiles = await Promise.all(
        refs.map(async (ref) => ({ path: tilePath(ref), data: Buffer.concat(await log.nodes(tileNodes(ref, 3000)!)).toString('base64') })),
      );
      expect(tileNodes({ level: 0, index: 11, width: 185 }, 3000)).to.equal(null);
      expect(tileNodes({ level: 1, index: 0, width: 12 }, 3000)).to.equal(null);
      const go = await tlogCheck({ vkey: verifierKey(ORIGIN, key.publicKey), records, checkpoints: [cp.note], inclusion, tiles });
      expect(go.errors).to.equal(null);
      expect(go.checked).to.deep.equal({ checkpoints: 1, inclusion: 3000, tiles: 13 });
    });

    it('admits one signer at a time; a lease-less or stale signer cannot move the head; a lapsed lease is taken over', async () => {
      const a = signer(300);
      const b = signer(300);
      await store.putReceipt(receipt(0));
      expect(await a.tick()).to.equal(1);
      expect(await b.tick()).to.equal(null);
      expect(b.holding).to.equal(false);
      // Without the lease, or on top of a checkpoint that moved, nothing is stored.
      expect(await log.advance(b.owner, 1, 2, [], 'forged')).to.equal('lost');
      expect(await log.advance(a.owner, 0, 1, [], 'stale')).to.equal('stale');
      expect(openCheckpoint((await log.checkpoint())!.note, key.publicKey).ok).to.equal(true);
      // `a` stops renewing (as a killed signer does): once the lease lapses, `b` takes over and goes on.
      await store.putReceipt(receipt(1));
      // Redis lets the 300 ms lease lapse on its own clock; until then `b` sequences nothing.
      expect(await until(async () => (await b.tick()) === 2, { what: "b to take over a's lapsed lease" })).to.equal(true);
      expect(await a.tick()).to.equal(null);
      // A clean close hands the lease over at once.
      await b.close();
      expect(await a.tick()).to.equal(2);
    });
  });
}

logContract('memory', async () => new MemoryStore());
onRedis('receipt log contract on redis', (connect) => logContract('redis', connect));
