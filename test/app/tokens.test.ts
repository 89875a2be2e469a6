/**
 * Personal access tokens as the API sees them: the 401 for each way a token can be wrong, revocation one by
 * one and legacy tokens in bulk — seen by a second gateway instance on the same Redis from its very next
 * request — and tokens stored only as hashes.
 */
import { expect } from 'chai';
import { createClient } from 'redis';
import { startWorld, type World } from '../helpers/world.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { generateToken, parseToken, PAT_PREFIX } from '../../src/auth/pat.js';

describe('personal access tokens', () => {
  let w: World;
  let second: TestGateway;
  const body = { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'hi' }] };
  const enc = encodeURIComponent;

  before(async () => {
    w = await startWorld();
    second = await startTestGateway({ upstreamUrl: w.upstream.baseUrl, redisUrl: w.redis.url });
  });
  after(async () => {
    await second.close();
    await w.stop();
  });

  it('issues tokens with the personal prefix and a checksum a scanner can verify offline', async () => {
    const { token } = await w.gw.principal();
    expect(token.startsWith(PAT_PREFIX)).to.equal(true);
    expect(parseToken(token)).to.equal('v2');
    const flipped = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    expect(parseToken(flipped)).to.equal(null);
  });

  for (const [name, header, code] of [
    ['no Authorization header', null, 'unauthenticated'],
    ['a non-bearer scheme', 'Basic dXNlcjpwYXNz', 'unauthenticated'],
    ['a string that is not a token', 'Bearer hello', 'invalid-token'],
    ['a token with a broken checksum', `Bearer ${PAT_PREFIX}${'a'.repeat(38)}`, 'invalid-token'],
    ['a well-formed token nobody issued', `Bearer ${generateToken()}`, 'invalid-token'],
  ] as const) {
    it(`answers 401 ${code} for ${name}`, async () => {
      const res = await fetch(`${w.gw.apiUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(header ? { authorization: header } : {}) },
        body: JSON.stringify(body),
      });
      expect(res.status).to.equal(401);
      expect(((await res.json()) as any).error.code).to.equal(code);
    });
  }

  it('lists tokens by id and label, never the token', async () => {
    const p = await w.gw.principal();
    await w.gw.admin('POST', `/principals/${enc(p.id)}/tokens`, { label: 'ci agent' });
    const list = await w.gw.admin('GET', `/principals/${enc(p.id)}/tokens`);
    expect(list.body.data.map((t: any) => t.label)).to.deep.equal(['test', 'ci agent']);
    expect(JSON.stringify(list.body)).not.to.contain(p.token);
    expect(list.body.data[0]).to.include.keys('id', 'label');
  });

  it('stores only hashes: the token string appears nowhere in Redis', async () => {
    const p = await w.gw.principal();
    const c = createClient({ url: w.redis.url });
    await c.connect();
    const dump: string[] = [];
    for (const key of await c.keys('*')) {
      const type = await c.type(key);
      if (type === 'string') dump.push(key, (await c.get(key)) ?? '');
      else if (type === 'hash') dump.push(key, JSON.stringify(await c.hGetAll(key)));
      else if (type === 'set') dump.push(key, JSON.stringify(await c.sMembers(key)));
      else if (type === 'list') dump.push(key, JSON.stringify(await c.lRange(key, 0, -1)));
      else if (type === 'zset') dump.push(key, JSON.stringify(await c.zRange(key, 0, -1)));
      else dump.push(key);
    }
    await c.close();
    expect(dump.join('\n')).not.to.contain(p.token.slice(PAT_PREFIX.length));
  });

  it('a revoked token answers 401 token-revoked on every instance from the next request', async () => {
    const p = await w.gw.principal();
    expect((await second.chat(p.token, body)).status).to.equal(200);
    const revoke = await w.gw.admin('POST', `/tokens/${p.tokenId}/revoke`);
    expect(revoke.status).to.equal(200);
    for (const gw of [w.gw, second]) {
      const res = await gw.chat(p.token, body);
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('token-revoked');
    }
    // Revoking again is harmless; an unknown id is 404.
    expect((await w.gw.admin('POST', `/tokens/${p.tokenId}/revoke`)).status).to.equal(200);
    expect((await w.gw.admin('POST', '/tokens/tok_nope/revoke')).body.error.code).to.equal('token-not-found');
  });

  it('legacy v1 tokens are revoked together, answer token-revoked naming legacy-token-revoked, and v2 tokens live on', async () => {
    const p = await w.gw.principal();
    const legacy = await w.gw.admin('POST', `/principals/${enc(p.id)}/tokens`, { label: 'old', format: 'v1' });
    expect(legacy.body.token).to.match(/^pcl_v1_[0-9a-f]{40}$/);
    expect((await w.gw.chat(legacy.body.token, body)).status).to.equal(200);
    const bulk = await w.gw.admin('POST', '/tokens/revoke-legacy');
    expect(bulk.body.revoked).to.be.at.least(1);
    const res = await second.chat(legacy.body.token, body);
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('token-revoked');
    expect(res.body.error.message).to.contain('legacy-token-revoked').and.contain('console');
    expect((await second.chat(p.token, body)).status).to.equal(200);
  });

  it('never echoes a presented token in an error', async () => {
    const fake = generateToken();
    const res = await w.gw.chat(fake, body);
    expect(JSON.stringify(res.body)).not.to.contain(fake);
  });
});
