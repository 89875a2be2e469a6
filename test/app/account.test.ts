/**
 * The account token routes (API host, cookie only): a person in a browser session issues a PAT shown once,
 * lists their tokens (never the token), and revokes their own — after which the PAT answers 401
 * `token-revoked` — but not another's (404). A PAT cannot use these routes (403), a request without a
 * session cannot (401), a cross-site page cannot (403), and bad bodies are 400 with nothing issued.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { Browser } from '../helpers/browser.js';
import { parseToken } from '../../src/auth/pat.js';
import { until } from '../helpers/wait.js';

describe('account token routes', () => {
  let w: World;
  const chat = { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'hi' }] };
  before(async () => {
    w = await startWorld();
  });
  after(() => w.stop());

  async function person() {
    const p = await w.gw.principal();
    const b = new Browser(w.gw);
    await b.seedSession(p.id);
    return { p, b };
  }

  it('issues a PAT shown once, which calls the chat API as the principal', async () => {
    const { p, b } = await person();
    const res = await b.post('api', '/v1/account/api-token', { label: 'my agent' });
    expect(res.status).to.equal(201);
    expect(Object.keys(res.body).sort()).to.deep.equal(['id', 'label', 'token']);
    expect(res.body.label).to.equal('my agent');
    expect(parseToken(res.body.token)).to.equal('v2');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const call = await w.gw.chat(res.body.token, chat);
    expect(call.status).to.equal(200);
    const receipts = await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/tokens`);
    expect(receipts.body.data.map((t: { id: string }) => t.id)).to.include(res.body.id);
  });

  it("lists the principal's tokens with id, label, created, last used and revoked, never a token or hash", async () => {
    const { p, b } = await person();
    const issued = await b.post('api', '/v1/account/api-token', { label: 'second' });
    const list = await b.get('api', '/v1/account/api-tokens');
    expect(list.status).to.equal(200);
    expect(list.body.data.map((t: { label: string }) => t.label)).to.deep.equal(['test', 'second']);
    for (const t of list.body.data) expect(Object.keys(t).sort()).to.deep.equal(['createdAt', 'id', 'label', 'lastUsedAt', 'revokedAt']);
    expect(list.body.data.map((t: { lastUsedAt: unknown }) => t.lastUsedAt)).to.deep.equal([null, null]);
    expect(JSON.stringify(list.body)).to.not.contain(issued.body.token);
    expect(JSON.stringify(list.body)).to.not.contain(p.token);
    // A call with the second token shows as its last use (reported without holding the call up).
    const before = Date.now();
    expect((await w.gw.chat(issued.body.token, chat)).status).to.equal(200);
    const lastUsed: string = await until(async () => (await b.get('api', '/v1/account/api-tokens')).body.data[1].lastUsedAt, {
      what: "the token's last use to be reported",
    });
    expect(Date.parse(lastUsed)).to.be.at.least(before - 1000);
    expect((await b.get('api', '/v1/account/api-tokens')).body.data[0].lastUsedAt).to.equal(null);
  });

  it("revokes one of the principal's own tokens: the PAT then answers 401 token-revoked", async () => {
    const { b } = await person();
    const issued = await b.post('api', '/v1/account/api-token', { label: 'to revoke' });
    const res = await b.post('api', '/v1/account/api-token/revoke', { id: issued.body.id });
    expect(res.status).to.equal(200);
    expect(res.body.id).to.equal(issued.body.id);
    expect(res.body.revokedAt).to.be.a('string');
    const call = await w.gw.chat(issued.body.token, chat);
    expect(call.status).to.equal(401);
    expect(call.body.error.code).to.equal('token-revoked');
    const again = await b.post('api', '/v1/account/api-token/revoke', { id: issued.body.id });
    expect(again.body.revokedAt).to.equal(res.body.revokedAt);
    const listed = (await b.get('api', '/v1/account/api-tokens')).body.data.find((t: { id: string }) => t.id === issued.body.id);
    expect(listed.revokedAt).to.equal(res.body.revokedAt);
  });

  it("another principal's token is 404 token-not-found, and stays alive", async () => {
    const { b } = await person();
    const other = await w.gw.principal();
    for (const id of [other.tokenId, 'tok_nosuchtoken']) {
      const res = await b.post('api', '/v1/account/api-token/revoke', { id });
      expect(res.status, id).to.equal(404);
      expect(res.body.error.code).to.equal('token-not-found');
    }
    expect((await w.gw.chat(other.token, chat)).status).to.equal(200);
  });

  it('a PAT on a cookie route answers 403 pat-not-accepted, and issues nothing', async () => {
    const p = await w.gw.principal();
    const auth = { authorization: `Bearer ${p.token}` };
    const anon = new Browser(w.gw);
    for (const [method, path, body] of [
      ['POST', '/v1/account/api-token', { label: 'x' }],
      ['GET', '/v1/account/api-tokens', undefined],
      ['POST', '/v1/account/api-token/revoke', { id: p.tokenId }],
    ] as const) {
      const res = await anon.request('api', method, path, body, auth);
      expect(res.status, path).to.equal(403);
      expect(res.body.error.code).to.equal('pat-not-accepted');
    }
    const tokens = await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/tokens`);
    expect(tokens.body.data).to.have.length(1);
    expect(tokens.body.data[0].revokedAt).to.equal(null);
  });

  it('without a session: 401 session-required', async () => {
    const res = await new Browser(w.gw).post('api', '/v1/account/api-token', { label: 'x' });
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('session-required');
  });

  it('a cross-site POST with the cookie is 403 cross-site-request, and issues nothing', async () => {
    const { p, b } = await person();
    b.origin = 'https://evil.example';
    const res = await b.post('api', '/v1/account/api-token', { label: 'stolen' });
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal('cross-site-request');
    const tokens = await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/tokens`);
    expect(tokens.body.data.map((t: { label: string }) => t.label)).to.deep.equal(['test']);
  });

  it('bad bodies are 400 invalid-request naming the field, and issue nothing', async () => {
    const { p, b } = await person();
    for (const [body, says] of [
      [{}, 'label'],
      [{ label: '' }, 'label'],
      [{ label: 'x'.repeat(101) }, 'label'],
      [{ label: 7 }, 'label'],
      [{ label: 'ok', extra: 1 }, 'extra'],
    ] as const) {
      const res = await b.post('api', '/v1/account/api-token', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('invalid-request');
      expect(res.body.error.message).to.contain(says);
    }
    expect((await b.post('api', '/v1/account/api-token', '{"label":')).body.error.code).to.equal('invalid-json');
    expect((await b.post('api', '/v1/account/api-token/revoke', { id: 5 })).body.error.code).to.equal('invalid-request');
    const tokens = await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/tokens`);
    expect(tokens.body.data).to.have.length(1);
  });
});
