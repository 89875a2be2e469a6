/**
 * The log's tree (RFC 6962 / RFC 9162) and its checkpoints (C2SP tlog-checkpoint as a signed note), checked
 * twice: by our own verifier and, independently, by Go's golang.org/x/mod/sumdb/tlog and sumdb/note
 * (test/receipts/tlogcheck). Every leaf of every tree of 1 to 70 leaves and of one of 3000, every
 * consistency proof between two sizes up to 70; a changed leaf, proof, root, checkpoint or signature fails.
 */
import { expect } from 'chai';
import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import {
  assemble,
  consistencyPlan,
  EMPTY_ROOT,
  Frontier,
  inclusionPlan,
  leafHash,
  planNodes,
  rootPlan,
  verifyConsistency,
  verifyInclusion,
  type NodeId,
} from '../../src/receipts/merkle.js';
import { openCheckpoint, parseVerifierKey, signCheckpoint, verifierKey } from '../../src/receipts/note.js';
import { tlogCheck } from '../helpers/tlogcheck.js';

/** A tree kept as the store keeps it: every complete subtree's hash by (level, index). */
function build(n: number) {
  const records = Array.from({ length: n }, (_, i) => Buffer.from(`receipt ${i} ${'x'.repeat(i % 7)}`));
  const nodes = new Map<string, Buffer>();
  const tree = new Frontier(0, []);
  const roots: Buffer[] = [EMPTY_ROOT];
  records.forEach((r, i) => {
    const leaf = leafHash(r);
    nodes.set(`0/${i}`, leaf);
    for (const made of tree.append(leaf)) nodes.set(`${made.id.level}/${made.id.index}`, made.hash);
    roots.push(tree.root());
  });
  const read = (ids: NodeId[]) => ids.map((id) => nodes.get(`${id.level}/${id.index}`)!);
  const prove = (plan: NodeId[][]) => {
    const ids = planNodes(plan);
    return assemble(plan, ids, read(ids));
  };
  return { records, roots, read, prove };
}

const b64 = (hs: Buffer[]) => hs.map((h) => h.toString('base64'));
const flip = (b: Buffer) => {
  const c = Buffer.from(b);
  c[c.length - 1]! ^= 1;
  return c;
};

describe('receipt log: Merkle tree and proofs', function () {
  this.timeout(60_000);

  it('proves every leaf of trees of 1 to 70 leaves, and every consistency between two such sizes, as Go’s tlog agrees', async () => {
    const t = build(70);
    const inclusion: Array<{ index: number; size: number; proof: string[] }> = [];
    const consistency: Array<{ from: number; to: number; proof: string[] }> = [];
    for (let size = 1; size <= 70; size += 1) {
      // The root from stored nodes (O(log n) of them) is the root the tree grew to.
      const ids = rootPlan(size);
      expect(assemble([ids], ids, t.read(ids))[0]).to.deep.equal(t.roots[size]);
      for (let index = 0; index < size; index += 1) {
        const proof = t.prove(inclusionPlan(index, size));
        expect(verifyInclusion(index, size, leafHash(t.records[index]!), proof, t.roots[size]!), `leaf ${index} of ${size}`).to.equal(true);
        inclusion.push({ index, size, proof: b64(proof) });
      }
      for (let from = 1; from <= size; from += 1) {
        const proof = t.prove(consistencyPlan(from, size));
        expect(verifyConsistency(from, size, t.roots[from]!, t.roots[size]!, proof), `${from} -> ${size}`).to.equal(true);
        consistency.push({ from, to: size, proof: b64(proof) });
      }
    }
    expect(inclusion).to.have.length(2485);
    expect(consistency).to.have.length(2485);
    const go = await tlogCheck({
      records: b64(t.records),
      roots: t.roots.slice(1).map((r, i) => ({ size: i + 1, root: r.toString('base64') })),
      inclusion,
      consistency,
    });
    expect(go.errors).to.equal(null);
    expect(go.checked).to.deep.equal({ roots: 70, inclusion: 2485, consistency: 2485 });
  });

  it('proves every leaf of a tree of 3000 leaves with at most 12 hashes each, as Go’s tlog agrees', async () => {
    const size = 3000;
    const t = build(size);
    const inclusion = t.records.map((r, index) => {
      const proof = t.prove(inclusionPlan(index, size));
      expect(proof.length).to.be.at.most(12);
      expect(verifyInclusion(index, size, leafHash(r), proof, t.roots[size]!)).to.equal(true);
      return { index, size, proof: b64(proof) };
    });
    const consistency = [1, 2, 3, 255, 256, 257, 1024, 1999, 2048, 2999, 3000].map((from) => ({
      from,
      to: size,
      proof: b64(t.prove(consistencyPlan(from, size))),
    }));
    const go = await tlogCheck({ records: b64(t.records), inclusion, consistency, roots: [{ size, root: t.roots[size]!.toString('base64') }] });
    expect(go.errors).to.equal(null);
    expect(go.checked).to.deep.equal({ roots: 1, inclusion: 3000, consistency: 11 });
  });

  it('refuses a changed leaf, proof, root, index or size', () => {
    const t = build(13);
    const proof = t.prove(inclusionPlan(5, 13));
    const leaf = leafHash(t.records[5]!);
    const root = t.roots[13]!;
    expect(verifyInclusion(5, 13, leaf, proof, root)).to.equal(true);
    expect(verifyInclusion(5, 13, leafHash(Buffer.from('receipt 5 changed')), proof, root)).to.equal(false);
    proof.forEach((_, i) =>
      expect(
        verifyInclusion(
          5,
          13,
          leaf,
          proof.map((p, j) => (i === j ? flip(p) : p)),
          root,
        ),
        `hash ${i}`,
      ).to.equal(false),
    );
    expect(verifyInclusion(5, 13, leaf, proof.slice(0, -1), root)).to.equal(false);
    expect(verifyInclusion(5, 13, leaf, [...proof, root], root)).to.equal(false);
    expect(verifyInclusion(5, 13, leaf, proof, flip(root))).to.equal(false);
    expect(verifyInclusion(4, 13, leaf, proof, root)).to.equal(false);
    expect(verifyInclusion(5, 7, leaf, proof, root)).to.equal(false);
    expect(verifyInclusion(13, 13, leaf, proof, root)).to.equal(false);

    const c = t.prove(consistencyPlan(6, 13));
    expect(verifyConsistency(6, 13, t.roots[6]!, root, c)).to.equal(true);
    c.forEach((_, i) =>
      expect(
        verifyConsistency(
          6,
          13,
          t.roots[6]!,
          root,
          c.map((p, j) => (i === j ? flip(p) : p)),
        ),
      ).to.equal(false),
    );
    expect(verifyConsistency(6, 13, flip(t.roots[6]!), root, c)).to.equal(false);
    expect(verifyConsistency(6, 13, t.roots[6]!, flip(root), c)).to.equal(false);
    expect(verifyConsistency(7, 13, t.roots[7]!, root, c)).to.equal(false);
    expect(verifyConsistency(6, 13, t.roots[6]!, root, c.slice(1))).to.equal(false);
    // A rewritten history: the same size, another leaf 2, gives another root the old proof cannot reach.
    const other = build(13);
    other.records[2] = Buffer.from('rewritten');
    expect(verifyConsistency(6, 13, leafHash(Buffer.from('rewritten')), root, c)).to.equal(false);
  });
});

describe('receipt log: checkpoints (C2SP tlog-checkpoint, signed note)', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const publicKey = createPublicKey(privateKey);
  const origin = 'gateway.example/receipts';
  const cp = { origin, size: 42, root: leafHash(Buffer.from('root')) };

  it('writes the three lines, a blank line and one signature line, and opens it with the key', () => {
    const note = signCheckpoint(cp, privateKey);
    const lines = note.split('\n');
    expect(lines.slice(0, 4)).to.deep.equal([origin, '42', cp.root.toString('base64'), '']);
    expect(lines[4]).to.match(/^— gateway\.example\/receipts [A-Za-z0-9+/]{91}=$/);
    expect(lines[5]).to.equal('');
    expect(openCheckpoint(note, publicKey)).to.deep.equal({ ok: true, checkpoint: cp });
    const vkey = verifierKey(origin, publicKey);
    expect(vkey).to.match(/^gateway\.example\/receipts\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect(parseVerifierKey(vkey).name).to.equal(origin);
    // Keys whose base64 holds '+' or '/' read back too (the key part is split off at the second '+' only).
    for (let i = 0; i < 40; i += 1) {
      const k = createPublicKey(generateKeyPairSync('ed25519').privateKey);
      const parsed = parseVerifierKey(verifierKey(origin, k));
      expect(parsed.publicKey.equals(k)).to.equal(true);
    }
  });

  it('refuses a changed size, root or origin, a changed signature, another key, and no signature', () => {
    const note = signCheckpoint(cp, privateKey);
    const reason = (n: string, k = publicKey) => {
      const r = openCheckpoint(n, k);
      return r.ok ? 'ok' : r.reason;
    };
    expect(reason(note.replace('\n42\n', '\n43\n'))).to.contain('signature does not match');
    expect(reason(note.replace(cp.root.toString('base64'), flip(cp.root).toString('base64')))).to.contain('signature does not match');
    expect(reason(note.replace(/^gateway/, 'other'))).to.contain('no signature by the key');
    const sig = /— \S+ (\S+)\n$/.exec(note)![1]!;
    const bad = Buffer.from(sig, 'base64');
    bad[10]! ^= 1;
    expect(reason(note.replace(sig, bad.toString('base64')))).to.contain('signature does not match');
    expect(reason(note, createPublicKey(generateKeyPairSync('ed25519').privateKey))).to.contain('no signature by the key');
    expect(reason(note.slice(0, note.indexOf('\n\n') + 1))).to.contain('no signatures');
    expect(openCheckpoint(note, publicKey, 'another/log').ok).to.equal(false);
  });

  it('is read by Go’s sumdb/note with our verifier key, and a tampered one is refused there too', async () => {
    const t = build(9);
    const signed = [3, 9].map((size) => signCheckpoint({ origin, size, root: t.roots[size]! }, privateKey));
    const vkey = verifierKey(origin, publicKey);
    const ok = await tlogCheck({ vkey, records: b64(t.records), checkpoints: signed });
    expect(ok.errors).to.equal(null);
    expect(ok.checked).to.deep.equal({ checkpoints: 2 });
    const tampered = await tlogCheck({ vkey, records: b64(t.records), checkpoints: [signed[1]!.replace('\n9\n', '\n8\n')] });
    expect(tampered.errors).to.have.length(1);
  });
});
