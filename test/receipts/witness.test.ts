/**
 * Witnessed checkpoints, with a real C2SP tlog-witness (the Go omniwitness of
 * github.com/transparency-dev/witness, test/helpers/witness.ts): the gateway submits every new checkpoint
 * with its consistency proof, and the checkpoint it serves (alone and in each receipt) carries the
 * witness's cosignature, which `portcullis receipt verify|audit --witness` require.
 *
 * The split view: the log's Redis is forked (a replica promoted on its own), a second gateway serves the
 * fork, and each side takes a different call, so two readers are shown two different trees of the same
 * size, both signed with the log's key. The witness cosigns the first and refuses the second as
 * inconsistent; a reader who requires the witness is refused the fork's receipt and checkpoint, with a
 * message that says why, even though the log's own signature and a consistency proof from before the fork
 * both hold.
 */
import { expect } from 'chai';
import { generateKeyPairSync, sign } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startWitness, type Witness } from '../helpers/witness.js';
import { provenReceipt } from '../helpers/receipts.js';
import { body } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { publicKeyFromPem } from '../../src/receipts/key.js';
import { createLogger } from '../../src/log.js';
import { claimedSize, signCheckpoint, verifierKey } from '../../src/receipts/note.js';
import { Witnesses } from '../../src/receipts/witness/witnesses.js';
import { countCosignatures, parseWitnessKey, witnessVerifierKey } from '../../src/receipts/witness/cosignature.js';

const privatePem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicKey = publicKeyFromPem(privatePem);
const NAME = 'receipts.portcullis.test/witnessed';
const dir = mkdtempSync(join(tmpdir(), 'witnessed-'));
const keyFile = join(dir, 'receipt-key.pub.pem');
writeFileSync(keyFile, publicKey.export({ type: 'spki', format: 'pem' }).toString());

/**
 * A witness has half the lease to answer (src/receipts/service.ts): 2 s here, so a witness slowed down by a
 * busy machine still cosigns, while the fork's gateway takes the copied lease over within 4 s.
 */
function witnessedRoot(witness: Witness): string {
  const root = configRoot();
  editFile(
    root,
    'config/gateway.yaml',
    (t) =>
      `${t}\nreceipts:\n  logName: ${NAME}\n  checkpointEveryMs: 200\n  leaseMs: 4000\n  witnesses:\n    - key: ${witness.vkey}\n      url: ${witness.url}\n`,
  );
  return root;
}

const checkpoint = async (apiUrl: string) => (await fetch(`${apiUrl}/v1/receipts/log/checkpoint`)).text();

/** Writes `text` to a fresh file and returns its path. */
let files = 0;
function file(text: string): string {
  const path = join(dir, `f${files++}`);
  writeFileSync(path, text);
  return path;
}

describe('witnessed checkpoints (C2SP tlog-witness, the Go omniwitness)', function () {
  this.timeout(90_000);
  let witness: Witness;
  let redis: RedisServer;
  let upstream: RecordingUpstream;
  let a: TestGateway;
  const others: Array<{ close(): Promise<void> } | { stop(): Promise<void> }> = [];
  const warnings: string[] = [];

  before(async () => {
    witness = await startWitness({ name: 'witness.portcullis.test/w1', origin: NAME, logKey: verifierKey(NAME, publicKey) });
    [redis, upstream] = await Promise.all([startRedisServer(), startRecordingUpstream()]);
    a = await startTestGateway({
      root: witnessedRoot(witness),
      upstreamUrl: upstream.baseUrl,
      redisUrl: redis.url,
      env: { PORTCULLIS_RECEIPT_KEY: privatePem },
      log: createLogger('warn', (l) => void warnings.push(l)),
    });
  });
  after(async () => {
    for (const o of others.reverse()) await ('close' in o ? o.close() : o.stop());
    await a?.close();
    await Promise.all([upstream?.stop(), redis?.stop(), witness?.stop()]);
  });

  it('cosigns every new checkpoint, serves it cosigned, and lets a reader require the witness', async () => {
    const p = await a.principal();
    const w = parseWitnessKey(witness.vkey);
    // Two calls, each awaited until a checkpoint covers it: the second checkpoint reaches the witness with
    // a consistency proof from the first, which the witness checks before it cosigns.
    const receipts = [];
    for (let i = 0; i < 2; i++) {
      const r = await a.chat(p.token, body());
      expect(r.status).to.equal(200);
      receipts.push(await provenReceipt(a.apiUrl, p.token, r.body.receiptId as string));
    }
    const sizes = receipts.map((r) => claimedSize(r['checkpoint'])!);
    expect(sizes[1]).to.be.greaterThan(sizes[0]!);
    for (const r of receipts) expect(countCosignatures(r['checkpoint'], [w]).cosigned.map((c) => c.name)).to.deep.equal([witness.name]);
    const served = await checkpoint(a.apiUrl);
    expect(
      served
        .trimEnd()
        .split('\n')
        .filter((l) => l.startsWith('— ')),
    ).to.have.length(2);
    expect(countCosignatures(served, [w]).missing).to.deep.equal([]);

    // GET /v1/secure names the witness by its verifier key.
    const secure = (await (await fetch(`${a.apiUrl}/v1/secure`)).json()) as { receiptLog: { witnesses?: Array<{ name: string; verifierKey: string }> } };
    expect(secure.receiptLog.witnesses).to.deep.equal([{ name: witness.name, verifierKey: witness.vkey }]);

    // The CLI: valid with the witness required; refused when a witness that did not cosign is required.
    const receiptFile = file(JSON.stringify(receipts[1]));
    const ok = await cli(['receipt', 'verify', receiptFile, '--key', keyFile, '--witness', witness.vkey]);
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).to.contain(`cosigned by 1 of 1 witnesses (${witness.name}), 1 required`);
    const stranger = witnessVerifierKey('witness.elsewhere.test', generateKeyPairSync('ed25519').publicKey);
    const two = await cli(['receipt', 'verify', receiptFile, '--key', keyFile, '--witness', witness.vkey, '--witness', stranger]);
    expect(two.code).to.equal(1);
    expect(two.stderr).to.contain('carries 1 of the 2 witness cosignatures required (not cosigned by: witness.elsewhere.test)');
    const oneOfTwo = await cli([
      'receipt',
      'verify',
      receiptFile,
      '--key',
      keyFile,
      '--witness',
      witness.vkey,
      '--witness',
      stranger,
      '--witnesses-required',
      '1',
    ]);
    expect(oneOfTwo.code, oneOfTwo.stderr).to.equal(0);
    // A checkpoint whose cosignature line was changed no longer counts.
    const cp = receipts[1]!['checkpoint'] as string;
    const lines = cp.split('\n');
    const at = lines.findIndex((l) => l.startsWith(`— ${witness.name} `));
    const sig = Buffer.from(lines[at]!.split(' ')[2]!, 'base64');
    sig[sig.length - 1]! ^= 1;
    lines[at] = `— ${witness.name} ${sig.toString('base64')}`;
    const forged = await cli([
      'receipt',
      'verify',
      file(JSON.stringify({ ...receipts[1], checkpoint: lines.join('\n') })),
      '--key',
      keyFile,
      '--witness',
      witness.vkey,
    ]);
    expect(forged.code).to.equal(1);
    expect(forged.stderr).to.contain(
      `a cosignature line in the name and key id of witness ${witness.name} that is not valid (its signature does not verify): forged or damaged`,
    );

    // audit --witness: the latest checkpoint extends the first one and is cosigned.
    const audit = await cli([
      'receipt',
      'audit',
      '--from',
      file(receipts[0]!['checkpoint']),
      '--to',
      'latest',
      '--url',
      a.apiUrl,
      '--key',
      keyFile,
      '--witness',
      witness.vkey,
    ]);
    expect(audit.code, audit.stderr).to.equal(0);
    expect(audit.stdout).to.contain('consistent:').and.contain(`cosigned by 1 of 1 witnesses (${witness.name})`);

    // Usage errors: a log key given as a witness key, a k beyond n, k without a witness.
    for (const args of [
      ['--witness', verifierKey(NAME, publicKey)],
      ['--witness', witness.vkey, '--witnesses-required', '2'],
      ['--witnesses-required', '1'],
    ]) {
      const bad = await cli(['receipt', 'verify', receiptFile, '--key', keyFile, ...args]);
      expect(bad.code, args.join(' ')).to.equal(2);
    }
  });

  it('catches a split view: the witness refuses the forked tree, and a reader who requires it is refused the fork', async () => {
    const p = await a.principal();
    const before = await a.chat(p.token, body());
    const common = await provenReceipt(a.apiUrl, p.token, before.body.receiptId as string);
    const forkPoint = common['checkpoint'] as string;

    // Fork the store: a replica of the log's Redis, once in step, promoted on its own.
    const fork = await startRedisServer({ replicaOf: redis.port });
    others.push(fork);
    const replica = createClient({ url: fork.url });
    await replica.connect();
    while (!/master_link_status:up/.test(await replica.info('replication'))) await sleep(20);
    const primary = createClient({ url: redis.url });
    await primary.connect();
    expect(await primary.sendCommand(['WAIT', '1', '5000'])).to.equal(1);
    await replica.sendCommand(['REPLICAOF', 'NO', 'ONE']);
    await Promise.all([replica.quit(), primary.quit()]);
    const b = await startTestGateway({
      root: witnessedRoot(witness),
      upstreamUrl: upstream.baseUrl,
      redisUrl: fork.url,
      env: { PORTCULLIS_RECEIPT_KEY: privatePem },
    });
    others.push(b);

    // Each side takes a different call: two trees of the same size, both signed with the log's key.
    const x = await a.chat(p.token, body());
    const seenByA = await provenReceipt(a.apiUrl, p.token, x.body.receiptId as string);
    const y = await b.chat(p.token, body());
    const seenByB = await provenReceipt(b.apiUrl, p.token, y.body.receiptId as string, 15_000);
    const [cpA, cpB] = [seenByA['checkpoint'] as string, seenByB['checkpoint'] as string];
    expect(claimedSize(cpB)).to.equal(claimedSize(cpA));
    expect(cpB.split('\n')[2]).to.not.equal(cpA.split('\n')[2]);

    // The witness cosigned A's tree and refused B's, saying so in its own log.
    const w = parseWitnessKey(witness.vkey);
    expect(countCosignatures(cpA, [w]).cosigned).to.have.length(1);
    expect(countCosignatures(cpB, [w]).cosigned).to.have.length(0);
    expect(witness.output()).to.contain('INCONSISTENT CHECKPOINTS');

    // Without a witness, B's reader is satisfied: the log's signature holds, and B's tree extends the fork point.
    const yFile = file(JSON.stringify(seenByB));
    const blind = await cli(['receipt', 'verify', yFile, '--key', keyFile]);
    expect(blind.code, blind.stderr).to.equal(0);
    const blindAudit = await cli(['receipt', 'audit', '--from', file(forkPoint), '--to', 'latest', '--url', b.apiUrl, '--key', keyFile]);
    expect(blindAudit.code, blindAudit.stderr).to.equal(0);

    // Requiring the witness, B's reader is refused, with the reason.
    const caught = await cli(['receipt', 'verify', yFile, '--key', keyFile, '--witness', witness.vkey]);
    expect(caught.code).to.equal(1);
    expect(caught.stderr).to.contain('carries 0 of the 1 witness cosignature required').and.contain('split view');
    const caughtAudit = await cli([
      'receipt',
      'audit',
      '--from',
      file(forkPoint),
      '--to',
      'latest',
      '--url',
      b.apiUrl,
      '--key',
      keyFile,
      '--witness',
      witness.vkey,
    ]);
    expect(caughtAudit.code).to.equal(1);
    expect(caughtAudit.stderr)
      .to.contain(`NOT valid: the checkpoint of size ${claimedSize(cpB)}`)
      .and.contain('split view');
    // A's reader, with the same witness, is satisfied.
    const fine = await cli(['receipt', 'verify', file(JSON.stringify(seenByA)), '--key', keyFile, '--witness', witness.vkey]);
    expect(fine.code, fine.stderr).to.equal(0);
  });

  it('keeps the log going while a witness is down, says so, and has the witness catch up once it is back', async () => {
    const p = await a.principal();
    const w = parseWitnessKey(witness.vkey);
    witness.signal('SIGSTOP');
    let during: Record<string, any>;
    try {
      const r = await a.chat(p.token, body());
      during = await provenReceipt(a.apiUrl, p.token, r.body.receiptId as string, 10_000);
    } finally {
      witness.signal('SIGCONT');
    }
    // Stored and served without the cosignature; the gateway logged why.
    expect(countCosignatures(during['checkpoint'], [w]).cosigned).to.have.length(0);
    const refused = warnings.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['event'] === 'receipts.witness.refused');
    expect(refused.map((l) => l['witness'])).to.include(witness.name);
    expect(JSON.stringify(refused)).to.contain('cannot reach the witness');
    const notYet = await cli(['receipt', 'verify', file(JSON.stringify(during)), '--key', keyFile, '--witness', witness.vkey]);
    expect(notYet.code).to.equal(1);
    expect(notYet.stderr).to.contain('or it has not been witnessed yet');

    // Back up: the next checkpoint reaches it with a proof from the size it holds, and is cosigned.
    const r = await a.chat(p.token, body());
    const after = await provenReceipt(a.apiUrl, p.token, r.body.receiptId as string);
    expect(claimedSize(after['checkpoint'])).to.be.greaterThan(claimedSize(during['checkpoint'])!);
    expect(countCosignatures(after['checkpoint'], [w]).cosigned).to.have.length(1);
    const ok = await cli(['receipt', 'verify', file(JSON.stringify(after)), '--key', keyFile, '--witness', witness.vkey]);
    expect(ok.code, ok.stderr).to.equal(0);
  });
});

describe('receipts.witnesses in config', () => {
  it('is checked at load: a key that is not a cosignature/v1 key, a witness named twice, or one key under two names, is refused with its path', async () => {
    const goodKey = generateKeyPairSync('ed25519').publicKey;
    const good = witnessVerifierKey('witness.portcullis.test/w1', goodKey);
    const root = configRoot();
    editFile(
      root,
      'config/gateway.yaml',
      (t) =>
        `${t}\nreceipts:\n  witnesses:\n    - key: ${verifierKey('log.portcullis.test', publicKey)}\n      url: http://127.0.0.1:1\n` +
        `    - key: ${good}\n      url: http://127.0.0.1:2\n    - key: ${good}\n      url: http://127.0.0.1:3\n` +
        `    - key: ${witnessVerifierKey('witness.portcullis.test/alias', goodKey)}\n      url: http://127.0.0.1:4\n`,
    );
    const r = await cli(['check', '--root', root]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('config/gateway.yaml: /receipts/witnesses/0/key the witness key "log.portcullis.test" is not a cosignature/v1 Ed25519 key');
    expect(r.stderr).to.contain('config/gateway.yaml: /receipts/witnesses/2/key repeats witness "witness.portcullis.test/w1"');
    expect(r.stderr).to.contain(
      'config/gateway.yaml: /receipts/witnesses/3/key is the key of witness "witness.portcullis.test/w1" under another name ("witness.portcullis.test/alias"): one witness cannot be listed twice',
    );
  });
});

/**
 * A witness that misbehaves (a Node HTTP server standing in for a witness gone wrong, or whatever sits on
 * the path to it: the Go witness does none of this), spoken to over HTTP by the gateway's witness client.
 */
describe('a witness that misbehaves', () => {
  const origin = 'log.portcullis.test/misbehaving';
  const logKey = generateKeyPairSync('ed25519').privateKey;
  const name = 'witness.portcullis.test/odd';
  const wKey = generateKeyPairSync('ed25519');
  const vkey = witnessVerifierKey(name, wKey.publicKey);
  const cp = (size: number) => signCheckpoint({ origin, size, root: Buffer.alloc(32, size) }, logKey);
  /** Its real cosignature line for the checkpoint in an add-checkpoint body. */
  const cosignatureFor = (request: string) => {
    const note = request.slice(request.indexOf('\n\n') + 2);
    const t = Buffer.alloc(8);
    const time = BigInt(Math.floor(Date.now() / 1000));
    t.writeBigUInt64BE(time);
    const sig = sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${note.slice(0, note.lastIndexOf('\n\n') + 1)}`), wKey.privateKey);
    return `— ${name} ${Buffer.concat([parseWitnessKey(vkey).id, t, sig]).toString('base64')}\n`;
  };
  const servers: http.Server[] = [];
  /** A witness answering each request with `answer(request body, its number)`. */
  async function serve(answer: (body: string, n: number, res: http.ServerResponse) => void): Promise<{ url: string; requests: string[] }> {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        requests.push(Buffer.concat(chunks).toString());
        answer(requests.at(-1)!, requests.length, res);
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
  }
  const refusals = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['event'] === 'receipts.witness.refused');
  const noProof = async () => [Buffer.alloc(32)];
  after(() => servers.forEach((s) => s.close()));

  it('is asked again at the next checkpoint after a 409 claiming a larger tree (a forged size costs one checkpoint)', async () => {
    const w = await serve((body, n, res) => {
      if (n === 1) {
        res.writeHead(409, { 'content-type': 'text/x.tlog.size' }).end('99999999999\n');
        return;
      }
      res.writeHead(200).end(cosignatureFor(body));
    });
    const logged: string[] = [];
    const witnesses = new Witnesses(
      [{ key: vkey, url: w.url }],
      2000,
      createLogger('warn', (l) => void logged.push(l)),
    );
    const first = await witnesses.cosign(cp(1), 1, 0, noProof);
    expect(countCosignatures(first, [parseWitnessKey(vkey)]).cosigned).to.have.length(0);
    expect(refusals(logged)[0]).to.include({ witness: name, size: 1, status: 409 });
    expect(String(refusals(logged)[0]!['reason']))
      .to.contain('says it holds a tree of 99999999999 leaves')
      .and.contain('asked again at the next checkpoint');
    const second = await witnesses.cosign(cp(2), 2, 1, noProof);
    expect(w.requests).to.have.length(2);
    expect(w.requests[1]).to.match(/^old 1\n/);
    expect(countCosignatures(second, [parseWitnessKey(vkey)]).cosigned.map((c) => c.name)).to.deep.equal([name]);
  });

  it('is not followed to where it redirects, and an answer longer than 16 KiB is not read', async () => {
    const elsewhere = await serve((body, _n, res) => void res.writeHead(200).end(cosignatureFor(body)));
    const redirecting = await serve((_b, _n, res) => void res.writeHead(307, { location: `${elsewhere.url}/add-checkpoint` }).end());
    const long = await serve((body, _n, res) => void res.writeHead(200).end(cosignatureFor(body) + 'x'.repeat(1 << 20)));
    for (const [url, says] of [
      [redirecting.url, 'answered a redirect (307), which is not followed'],
      [long.url, 'answered more than 16384 bytes'],
    ] as const) {
      const logged: string[] = [];
      const witnesses = new Witnesses(
        [{ key: vkey, url }],
        2000,
        createLogger('warn', (l) => void logged.push(l)),
      );
      const note = await witnesses.cosign(cp(1), 1, 0, noProof);
      expect(countCosignatures(note, [parseWitnessKey(vkey)]).cosigned, says).to.have.length(0);
      expect(String(refusals(logged)[0]?.['reason']), says).to.contain(says);
    }
    expect(elsewhere.requests).to.have.length(0);
  });
});
