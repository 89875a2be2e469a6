/**
 * Backup and restore, as docs/operators.md tells an operator to do it: while paid calls run, the append-only
 * files of the money Redis are copied (auto-rewrite paused, as Redis' own backup advice says), and the copy is
 * restored into a fresh redis-server with a gateway started on it holding the same receipt key and data key.
 * Everything a client was answered before the copy began is there: its receipt and log leaf, the principal's
 * token and browser session, a TOTP enrolment that still checks codes; every balance is whole (available =
 * granted - spent - reserved, and once orphaned reservations expire, spent = the receipts' charges); and
 * `portcullis receipt audit` finds the restored log consistent with a checkpoint published before the copy.
 */
import { expect } from 'chai';
import { cpSync, mkdtempSync, readdirSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { startWorld, type World } from '../helpers/world.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { smallLimitsRoot } from '../helpers/billing.js';
import { until } from '../helpers/wait.js';
import { answeredAtLeast, expectRestored, holdings, keepCheckpoint, ORIGINS, paidCalls } from '../helpers/backup-restore.js';

describe('backup and restore of the money Redis', function () {
  this.timeout(120_000);
  let w: World;
  let restored: RedisServer;
  let gw2: TestGateway;
  let now = Date.parse('2030-05-02T09:00:00.000Z');
  const clock = () => now;
  const receiptKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const work = mkdtempSync(join(tmpdir(), 'portcullis-backup-'));

  before(async () => {
    w = await startWorld({ root: smallLimitsRoot(0), now: clock, env: { ...ORIGINS, PORTCULLIS_RECEIPT_KEY: receiptKey } });
    await w.upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
  });
  after(async () => {
    await gw2?.close();
    await restored?.stop();
    await w.stop();
  });

  it('restores balances, tokens, sessions, TOTP and a log consistent with checkpoints published before the copy', async () => {
    const held = await holdings(w.gw, now, 'backup-grant');

    // Paid calls in flight the whole time the copy is taken.
    const calls = paidCalls(w.gw, held.principal.token);
    await answeredAtLeast(calls, 10);
    // A checkpoint a reviewer kept, published before the copy.
    const checkpoint = join(work, 'before.txt');
    await keepCheckpoint(w.gw, checkpoint);

    // The copy: pause AOF rewrites so the file set cannot change under us, copy appendonlydir, resume.
    const admin = createClient({ url: w.redis.url });
    await admin.connect();
    await admin.configSet('auto-aof-rewrite-percentage', '0');
    await until(async () => !(await admin.info('persistence')).includes('aof_rewrite_in_progress:1'), { what: 'a running AOF rewrite to end' });
    const copiedFrom = Date.now();
    const mustHave = calls.answered.filter((a) => a.at < copiedFrom).map((a) => a.id);
    const backup = join(work, 'appendonlydir');
    cpSync(join(w.redis.dir, 'appendonlydir'), backup, { recursive: true });
    await admin.configSet('auto-aof-rewrite-percentage', '100');
    await admin.close();
    await answeredAtLeast(calls, calls.answered.length + 5);
    expect(await calls.stop()).to.be.greaterThan(mustHave.length);

    // Restore into a fresh redis-server: its files replaced by the copy before it starts again.
    restored = await startRedisServer();
    await restored.kill('SIGTERM');
    cpSync(backup, join(restored.dir, 'appendonlydir'), { recursive: true });
    expect(readdirSync(join(restored.dir, 'appendonlydir')).some((f) => f.endsWith('.manifest'))).to.equal(true);
    await restored.restart();
    gw2 = await startTestGateway({
      root: w.gw.root,
      upstreamUrl: w.upstream.baseUrl,
      redisUrl: restored.url,
      now: clock,
      env: { ...ORIGINS, PORTCULLIS_RECEIPT_KEY: receiptKey },
    });

    await expectRestored(gw2, held, { mustHave, day: '2030-05-02', now: clock, advance: (ms) => (now += ms), checkpoint, receiptKey, work });
  });
});
