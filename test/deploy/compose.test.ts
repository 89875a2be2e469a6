/**
 * compose.yaml brought up by podman-compose: the gateway image and a Redis that fsyncs every write to a
 * volume, the keys from an env file. The README's walk-through passes against it (the catalog, a chat call
 * with the PAT the gateway prints, its receipt, a red-team call refused then admitted after the operator's
 * grant through the admin CLI inside the container), the receipt key and Stripe's webhook secret are the
 * env file's, and the state survives taking the whole stack down and up again (the Redis volume).
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/ports.js';
import { receiptKey } from '../../src/receipts/key.js';
import { demoPat, gatewayImage, podman, ready, redisImage, run } from './podman.js';

const PROJECT = 'portcullis-test-compose';
const GATEWAY = `${PROJECT}_gateway_1`;

describe('deploy: compose.yaml', function () {
  this.timeout(30 * 60_000);
  let env: Record<string, string>;
  let api: string;
  const adminToken = `pcl_admin_${'c'.repeat(40)}`;
  const { privateKey } = generateKeyPairSync('ed25519');

  const compose = (args: string[]) => run('podman-compose', ['-p', PROJECT, '-f', 'compose.yaml', ...args], { env });
  const logs = async () => {
    const r = await podman(['logs', GATEWAY]);
    return r.stdout + r.stderr;
  };
  const up = async () => {
    await compose(['up', '-d']);
    await ready(`${api}/readyz`, 120_000, async () => {
      const state = (await podman(['inspect', '-f', '{{.State.Status}}', GATEWAY])).stdout.trim();
      if (state !== 'running') throw new Error(`the gateway container is ${state}:\n${(await logs()).slice(-3000)}`);
    });
    // /readyz answers as soon as the listeners serve; the banner (with the PAT) is printed just after.
    for (let i = 0; !/demo PAT/.test(await logs()); i += 1) {
      if (i > 100) throw new Error(`the gateway printed no banner:\n${(await logs()).slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const chat = (pat: string, model: string) =>
    fetch(`${api}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${pat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Review: strcpy(buf, argv[1]);' }] }),
    });

  before(async () => {
    const [image, redis] = await Promise.all([gatewayImage(), redisImage()]);
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-compose-'));
    const envFile = join(dir, 'portcullis.env');
    // The receipt key on one line, its line breaks written \n, as deploy/portcullis.env.example says.
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().trimEnd().replace(/\n/g, '\\n');
    writeFileSync(
      envFile,
      [
        `STRIPE_SECRET_KEY=sk_test_compose`,
        `STRIPE_WEBHOOK_SECRET=whsec_compose`,
        `PORTCULLIS_RECEIPT_KEY=${pem}`,
        `PORTCULLIS_ADMIN_TOKEN=${adminToken}`,
        '',
      ].join('\n'),
    );
    env = { PORTCULLIS_IMAGE: image, REDIS_IMAGE: redis, PORTCULLIS_ENV_FILE: envFile };
    for (const name of ['API', 'AUTH', 'CONSOLE', 'SITE', 'GRAPH']) env[`${name}_PORT`] = String(await freePort());
    api = `http://127.0.0.1:${env['API_PORT']}`;
    await compose(['down', '-v']).catch(() => undefined);
    await up();
  });

  after(async () => {
    if (env) await compose(['down', '-v']).catch(() => undefined);
  });

  it('passes the walk-through: the catalog, a chat call with the printed PAT, its receipt, the grant for a red-team call', async () => {
    expect(await logs()).to.contain('store: redis');
    const models = (await (await fetch(`${api}/v1/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).to.include('shared-general-a');
    const pat = demoPat(await logs());
    const blue = await chat(pat, 'shared-general-a');
    expect(blue.status).to.equal(200);
    const { receiptId } = (await blue.json()) as { receiptId: string };
    const receipt = await fetch(`${api}/v1/receipts/${receiptId}`, { headers: { authorization: `Bearer ${pat}` } });
    expect(receipt.status).to.equal(200);

    const refused = await chat(pat, 'red-whitehacker-a');
    expect(refused.status).to.equal(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('verification-required');
    await podman(['exec', GATEWAY, 'node', 'bin/portcullis.js', 'admin', 'principal', 'grant', 'did:web:portcullis.localhost:tenant:demo', '--rung', 'card']);
    const red = await chat(pat, 'red-whitehacker-a');
    expect(red.status).to.equal(200);
    expect(((await red.json()) as { model: string }).model).to.equal('whitehacker-a-flash-next-cybersecurity-nvfp4');
  });

  it('takes the receipt key and Stripe webhook secret from the env file', async () => {
    expect(await (await fetch(`${api}/v1/secure`)).text()).to.contain(receiptKey(privateKey).keyId);
    // With STRIPE_WEBHOOK_SECRET set the webhook checks signatures (400) instead of answering 503.
    const hook = await fetch(`${api}/v1/webhooks/stripe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: '{}',
    });
    expect(hook.status).to.equal(400);
  });

  it('keeps tokens and receipts in the Redis volume across `down` and `up`', async () => {
    const pat = demoPat(await logs());
    const before = await chat(pat, 'shared-general-a');
    const { receiptId } = (await before.json()) as { receiptId: string };
    await compose(['down']);
    await up();
    const receipt = await fetch(`${api}/v1/receipts/${receiptId}`, { headers: { authorization: `Bearer ${pat}` } });
    expect(receipt.status).to.equal(200);
    expect((await chat(pat, 'shared-general-a')).status).to.equal(200);
  });
});
