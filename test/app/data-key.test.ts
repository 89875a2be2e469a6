/**
 * Secrets at rest, through the public routes on a real redis-server: a TOTP secret is sealed with the data key,
 * so the store holds it nowhere in clear; a gateway without the key cannot use it (503, recovery codes still
 * work); a new key rolls in with the old one kept for opening, a rewrap re-seals everything, and then the old
 * key can go; a secret stored in clear before sealing existed is sealed the first time it is read.
 */
import { expect } from 'chai';
import { createClient } from 'redis';
import { startWorld, type World } from '../helpers/world.js';
import { startTestGateway, TEST_DATA_KEY, type TestGateway } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson, type SoftAuthenticator } from '../helpers/passkey.js';
import { codeAt } from '../../src/totp/codes.js';
import { newDataKey } from '../../src/data-key/keyring.js';

const ORIGINS = {
  PORTCULLIS_AUTH_URL: 'http://localhost:28081',
  PORTCULLIS_CONSOLE_URL: 'http://localhost:28082',
  PORTCULLIS_API_URL: 'http://localhost:28080',
};
const STEP = 30_000;

/** Every value the Redis holds, as text: what a stolen dump would show. */
async function everything(url: string): Promise<string> {
  const c = createClient({ url });
  await c.connect();
  try {
    const out: string[] = [];
    for await (const keys of c.scanIterator({ COUNT: 1000 })) {
      for (const key of keys) {
        const type = await c.type(key);
        if (type === 'string') out.push(String(await c.get(key)));
        else if (type === 'hash') out.push(JSON.stringify(await c.hGetAll(key)));
        else if (type === 'set') out.push(JSON.stringify(await c.sMembers(key)));
        else if (type === 'zset') out.push(JSON.stringify(await c.zRange(key, 0, -1)));
        else if (type === 'list') out.push(JSON.stringify(await c.lRange(key, 0, -1)));
        out.push(key);
      }
    }
    return out.join('\n');
  } finally {
    await c.close();
  }
}

describe('secrets at rest: the data key', () => {
  let w: World;
  let clock = Date.now();
  const now = () => clock;
  const others: TestGateway[] = [];
  const gateway = async (dataKey: string) => {
    const gw = await startTestGateway({ upstreamUrl: w.upstream.baseUrl, redisUrl: w.redis.url, now, env: { ...ORIGINS, PORTCULLIS_DATA_KEY: dataKey } });
    others.push(gw);
    return gw;
  };

  before(async () => {
    w = await startWorld({ now, env: ORIGINS });
  });
  after(async () => {
    for (const gw of others) await gw.close();
    await w.stop();
  });

  async function enrolled(): Promise<{ a: SoftAuthenticator; secret: string; recoveryCodes: string[]; principalId: string }> {
    const b = new Browser(w.gw);
    const { a, principalId } = await newPerson(b);
    const { secret } = (await b.post('auth', '/v1/totp/enrol')).body;
    const confirm = await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(secret, clock) });
    expect(confirm.status, JSON.stringify(confirm.body)).to.equal(200);
    clock += STEP;
    return { a, secret, recoveryCodes: confirm.body.recoveryCodes, principalId };
  }

  async function codeSignIn(gw: TestGateway, a: SoftAuthenticator, body: Record<string, string>) {
    const b = new Browser(gw);
    const { verify } = await login(b, a);
    expect(verify.body.secondFactor).to.equal('totp');
    return b.post('auth', '/v1/totp/verify', body);
  }

  it('keeps no TOTP secret in clear anywhere in the store, and the secret still checks codes', async () => {
    const { a, secret } = await enrolled();
    const dump = await everything(w.redis.url);
    expect(dump).to.include('pcl-sealed:v1:test:');
    expect(dump).to.not.include(secret);
    expect(dump.toLowerCase()).to.not.include(secret.toLowerCase());
    expect((await codeSignIn(w.gw, a, { code: codeAt(secret, clock) })).status).to.equal(200);
    clock += STEP;
  });

  it('a gateway without the key cannot use the secret (503 data-key-unavailable), and a recovery code still signs in', async () => {
    const { a, secret, recoveryCodes } = await enrolled();
    const stranger = await gateway(`other:${newDataKey()}`);
    const refused = await codeSignIn(stranger, a, { code: codeAt(secret, clock) });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(503);
    expect(refused.body.error.code).to.equal('data-key-unavailable');
    expect(JSON.stringify(refused.body)).to.not.include(secret);
    const recovered = await codeSignIn(stranger, a, { recoveryCode: recoveryCodes[0]! });
    expect(recovered.status, JSON.stringify(recovered.body)).to.equal(200);
  });

  it('rolls a new key in: new,old opens what old sealed; a rewrap re-seals everything; then the old key can go', async () => {
    const people = [await enrolled(), await enrolled()];
    const fresh = `next:${newDataKey()}`;
    const rolling = await gateway(`${fresh},${TEST_DATA_KEY}`);
    const rewrap = await rolling.admin('POST', '/data-key/rewrap');
    expect(rewrap.status, JSON.stringify(rewrap.body)).to.equal(200);
    expect(rewrap.body.keyId).to.equal('next');
    expect(rewrap.body.unopenable).to.equal(0);
    expect(rewrap.body.rewrapped).to.be.at.least(2);
    expect(rewrap.body.total).to.be.at.least(rewrap.body.rewrapped);
    const dump = await everything(w.redis.url);
    expect(dump).to.not.include('pcl-sealed:v1:test:');
    const onlyNew = await gateway(fresh);
    for (const p of people) expect((await codeSignIn(onlyNew, p.a, { code: codeAt(p.secret, clock) })).status).to.equal(200);
    clock += STEP;
    expect((await onlyNew.admin('POST', '/data-key/rewrap')).body.rewrapped).to.equal(0);
  });

  it('a secret stored in clear (before sealing existed) still works and is sealed the first time it is read', async () => {
    const { a, principalId } = await enrolled();
    const clear = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    const c = createClient({ url: w.redis.url });
    await c.connect();
    try {
      const key = `pc:totp:${principalId}`;
      expect(await c.exists(key)).to.equal(1);
      await c.hSet(key, 'secret', clear);
      const signIn = await codeSignIn(w.gw, a, { code: codeAt(clear, clock) });
      expect(signIn.status, JSON.stringify(signIn.body)).to.equal(200);
      clock += STEP;
      expect(await c.hGet(key, 'secret')).to.match(/^pcl-sealed:v1:/);
    } finally {
      await c.close();
    }
  });
});
