/**
 * The receipt log across gateways, as a deployment runs it: two gateways on one Redis append concurrently
 * and produce one log (every receipt a distinct leaf, one signer, every proof valid against the same
 * checkpoints, as Go's tlog agrees), on one Redis and on a Redis Cluster; the log's public routes (checkpoint, consistency, hash tiles); and a
 * signer SIGKILLed while it holds the
 * lease is replaced by another gateway once the lease lapses.
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { createClient } from 'redis';
import { startWorld, type World } from '../helpers/world.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { spawnGateway } from '../helpers/process.js';
import { body } from '../helpers/billing.js';
import { provenReceipt } from '../helpers/receipts.js';
import { tlogCheck } from '../helpers/tlogcheck.js';
import { publicKeyFromPem } from '../../src/receipts/key.js';
import { verifyConsistencyBundle, verifyReceiptBundle } from '../../src/receipts/verify.js';
import { canonicalReceipt } from '../../src/receipts/canonical.js';
import { claimedSize, verifierKey } from '../../src/receipts/note.js';

const privatePem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicKey = publicKeyFromPem(privatePem);
const NAME = 'receipts.portcullis.test/log';

/** A configuration with a short signing lease, so a dead signer's lease lapses quickly. */
function logRoot(): string {
  const root = configRoot();
  editFile(root, 'config/gateway.yaml', (t) => `${t}\nreceipts:\n  logName: ${NAME}\n  checkpointEveryMs: 200\n  leaseMs: 1500\n`);
  return root;
}

const checkpoint = async (apiUrl: string) => (await fetch(`${apiUrl}/v1/receipts/log/checkpoint`)).text();

/**
 * Two gateways append concurrently and make one log: 60 calls alternating between them, 12 in flight,
 * checkpoints sampled from both; then every receipt is one distinct leaf, proves against the final
 * checkpoint, every sampled checkpoint is a prefix of it, and Go's tlog agrees.
 */
async function oneConsistentLog(a: TestGateway, b: TestGateway): Promise<void> {
  const p = await a.principal();
  const notes: string[] = [];
  const ids: string[] = [];
  // 60 calls, alternating gateways, 12 in flight; checkpoints are sampled from both while they run.
  const gateways = [a, b];
  let next = 0;
  const worker = async () => {
    while (next < 60) {
      const gw = gateways[next++ % 2]!;
      const r = await gw.chat(p.token, body());
      expect(r.status).to.equal(200);
      ids.push(r.body.receiptId as string);
      notes.push(await checkpoint(gw.apiUrl));
    }
  };
  await Promise.all(Array.from({ length: 12 }, worker));
  expect([a.receipts.checkpointer.holding, b.receipts.checkpointer.holding].filter(Boolean)).to.have.length(1);

  const receipts = await Promise.all(ids.map((id, i) => provenReceipt(gateways[i % 2]!.apiUrl, p.token, id)));
  const final = await checkpoint(a.apiUrl);
  expect(await checkpoint(b.apiUrl)).to.equal(final);
  const size = claimedSize(final)!;
  // Every receipt is one distinct leaf; nothing else is in the log (the principal's calls are all of it).
  const indices = receipts.map((r) => r['logIndex'] as number).sort((x, y) => x - y);
  expect(indices).to.deep.equal(Array.from({ length: 60 }, (_, i) => i));
  expect(size).to.equal(60);
  // Fetched again now, each receipt proves against the final checkpoint; every sampled checkpoint is a
  // prefix of it (one log, never two heads).
  const now = await Promise.all(ids.map((id) => provenReceipt(a.apiUrl, p.token, id)));
  for (const r of now) expect(verifyReceiptBundle(r, publicKey, final).ok, String(r['id'])).to.equal(true);
  const consistency = [];
  for (const note of new Set(notes)) {
    const from = claimedSize(note)!;
    if (from === 0) continue;
    const res = await fetch(`${b.apiUrl}/v1/receipts/log/consistency?from=${from}&to=${size}`);
    const proof = ((await res.json()) as { proof: string[] }).proof;
    expect(verifyConsistencyBundle(note, final, proof, publicKey).ok, `${from} -> ${size}`).to.equal(true);
    consistency.push({ from, to: size, proof });
  }
  const byIndex = [...now].sort((x, y) => x['logIndex'] - y['logIndex']);
  // The log as a C2SP tlog-tiles hash tile: the 60 leaf hashes, as Go's tlog computes that tile.
  const tile = await fetch(`${b.apiUrl}/v1/receipts/log/tile/0/000.p/${size}`);
  expect(tile.status).to.equal(200);
  expect(tile.headers.get('cache-control')).to.contain('immutable');
  const data = Buffer.from(await tile.arrayBuffer());
  expect(data.length).to.equal(32 * size);
  const go = await tlogCheck({
    tiles: [{ path: `0/000.p/${size}`, data: data.toString('base64') }],
    vkey: verifierKey(NAME, publicKey),
    records: byIndex.map((r) => canonicalReceipt(r).toString('base64')),
    checkpoints: [...new Set([...notes, final])],
    inclusion: byIndex.map((r) => ({ index: r['logIndex'], size, proof: r['inclusionProof'] })),
    consistency,
  });
  expect(go.errors).to.equal(null);
  expect(go.checked.inclusion).to.equal(60);
  expect(go.checked.tiles).to.equal(1);
}

describe('receipt log across gateways', function () {
  this.timeout(90_000);
  let w: World;
  let b: TestGateway;

  before(async () => {
    w = await startWorld({ root: logRoot(), env: { PORTCULLIS_RECEIPT_KEY: privatePem } });
    b = await startTestGateway({ root: logRoot(), upstreamUrl: w.upstream.baseUrl, redisUrl: w.redis.url, env: { PORTCULLIS_RECEIPT_KEY: privatePem } });
  });
  after(async () => {
    await b?.close();
    await w.stop();
  });

  it('makes one consistent log of two gateways appending concurrently, signed by one of them', async () => {
    await oneConsistentLog(w.gw, b);
  });

  it('answers the log routes publicly, and refuses a bad range with log-range-invalid', async () => {
    const note = await checkpoint(w.gw.apiUrl);
    const size = claimedSize(note)!;
    expect(size).to.be.greaterThan(1);
    const ask = async (q: string) => {
      const res = await fetch(`${w.gw.apiUrl}/v1/receipts/log/consistency${q}`);
      return { status: res.status, body: (await res.json()) as any };
    };
    const ok = await ask(`?from=1&to=${size}`);
    expect(ok.status).to.equal(200);
    expect(ok.body).to.include({ from: 1, to: size });
    for (const q of [
      '',
      '?from=1',
      `?from=0&to=${size}`,
      '?from=3&to=2',
      `?from=1&to=${size + 1}`,
      '?from=-1&to=2',
      '?from=1.5&to=2',
      '?from=01&to=2',
      `?from=x&to=${size}`,
    ]) {
      const bad = await ask(q);
      expect(bad.status, q).to.equal(400);
      expect(bad.body.error.code, q).to.equal('log-range-invalid');
    }
    // Tiles: only the canonical spelling, only under the latest checkpoint.
    for (const t of [`0/000.p/${size + 1}`, '0/000', '1/000.p/1', '0/0', '0/000.p/0', 'entries/000']) {
      const res = await fetch(`${w.gw.apiUrl}/v1/receipts/log/tile/${t}`);
      expect(res.status, t).to.equal(404);
      expect(((await res.json()) as any).error.code, t).to.equal('not-found');
    }
    // Another principal's receipt is not found; a receipt id is never taken for a log route.
    const p = await w.gw.principal();
    const q = await w.gw.principal();
    const r = await w.gw.chat(p.token, body());
    const other = await fetch(`${w.gw.apiUrl}/v1/receipts/${r.body.receiptId}`, { headers: { authorization: `Bearer ${q.token}` } });
    expect(other.status).to.equal(404);
  });

  it('replaces a signer SIGKILLed while it holds the lease, within the lease', async () => {
    // Close the in-process gateways' signers' hold: a third gateway, in its own process, takes the lease.
    await w.gw.receipts.checkpointer.close();
    await b.receipts.checkpointer.close();
    const victim = await spawnGateway(logRoot(), {
      REDIS_URL: w.redis.url,
      PORTCULLIS_ROUTE_SHARED_URL: w.upstream.baseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: w.upstream.baseUrl,
      PORTCULLIS_ADMIN_TOKEN: 'x',
      PORTCULLIS_RECEIPT_KEY: privatePem,
    });
    const p = await w.gw.principal();
    const first = await w.gw.chat(p.token, body());
    await provenReceipt(w.gw.apiUrl, p.token, first.body.receiptId); // signed by the victim, the only signer
    w.gw.receipts.start();
    // A signing round of this gateway's own, rather than a wait for its timer: the victim holds the lease.
    expect(await w.gw.receipts.checkpointer.tick()).to.equal(null);
    expect(w.gw.receipts.checkpointer.holding, 'the victim holds the lease').to.equal(false);

    victim.child.kill('SIGKILL');
    const r = await w.gw.chat(p.token, body());
    const proven = await provenReceipt(w.gw.apiUrl, p.token, r.body.receiptId, 10_000);
    // Covered once the victim's lease (1.5 s) lapsed and this gateway took it over.
    expect(verifyReceiptBundle(proven, publicKey).ok).to.equal(true);
    expect(w.gw.receipts.checkpointer.holding).to.equal(true);
  });
});

describe('receipt log before its first checkpoint', function () {
  this.timeout(60_000);

  it('answers log-not-ready and keeps receipts pending while another signer holds the lease', async () => {
    const redis = await startRedisServer();
    // A fresh deployment whose lease is held by a signer that never signs (it died right after taking it).
    const c = createClient({ url: redis.url });
    await c.connect();
    await c.set('pc:log:lease', 'signer_gone', { PX: 60_000 });
    await c.quit();
    const upstream = await startRecordingUpstream();
    const gw = await startTestGateway({ root: logRoot(), upstreamUrl: upstream.baseUrl, redisUrl: redis.url, env: { PORTCULLIS_RECEIPT_KEY: privatePem } });
    try {
      const res = await fetch(`${gw.apiUrl}/v1/receipts/log/checkpoint`);
      expect(res.status).to.equal(503);
      expect(((await res.json()) as any).error.code).to.equal('log-not-ready');
      const range = await fetch(`${gw.apiUrl}/v1/receipts/log/consistency?from=1&to=1`);
      expect(((await range.json()) as any).error.code).to.equal('log-range-invalid');
      const p = await gw.principal();
      const r = await gw.chat(p.token, body());
      expect(r.status).to.equal(200);
      // A signing round (what its timer runs twice a second) cannot take the lease, so it signs nothing.
      expect(await gw.receipts.checkpointer.tick()).to.equal(null);
      const got = (await (await fetch(`${gw.apiUrl}/v1/receipts/${r.body.receiptId}`, { headers: { authorization: `Bearer ${p.token}` } })).json()) as any;
      expect(got).to.include({ logIndex: 0, pending: true });
      expect(got).not.to.have.property('inclusionProof');
      expect(gw.receipts.checkpointer.holding).to.equal(false);
    } finally {
      await gw.close();
      await upstream.stop();
      await redis.stop();
    }
  });
});

describe('receipt log across gateways on a redis cluster', function () {
  this.timeout(90_000);
  let cluster: RedisCluster;
  let upstream: RecordingUpstream;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    [cluster, upstream] = await Promise.all([startRedisCluster(), startRecordingUpstream()]);
    const env = { PORTCULLIS_RECEIPT_KEY: privatePem, REDIS_CLUSTER_NODES: cluster.seeds.join(',') };
    a = await startTestGateway({ root: logRoot(), upstreamUrl: upstream.baseUrl, env });
    b = await startTestGateway({ root: logRoot(), upstreamUrl: upstream.baseUrl, env });
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([upstream?.stop(), cluster?.stop()]);
  });

  it('makes one consistent log of two gateways appending concurrently, signed by one of them', async () => {
    await oneConsistentLog(a, b);
  });
});
