/**
 * Browser sessions as the API and auth hosts see them: GET /v1/session, sign-out and "sign out everywhere"
 * seen by a second instance on the same Redis from its next request, idle and absolute lifetimes on the
 * gateway's clock, the two route classes (`pat / cookie` and `cookie`), and the same-origin rule for
 * cookie POSTs.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson } from '../helpers/passkey.js';
import { cookiePolicy, setCookie } from '../../src/sessions/cookie.js';

// Both instances are one deployment: the same public origins, whatever ports they bind.
const ORIGINS = {
  PORTCULLIS_API_URL: 'http://api.localhost',
  PORTCULLIS_AUTH_URL: 'http://auth.localhost',
  PORTCULLIS_CONSOLE_URL: 'http://console.localhost',
};
const chat = { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'Review this diff' }] };

describe('sessions', () => {
  let w: World;
  let second: TestGateway;
  let clock = Date.now();
  const now = () => clock;

  before(async () => {
    w = await startWorld({ env: ORIGINS, now });
    second = await startTestGateway({ upstreamUrl: w.upstream.baseUrl, redisUrl: w.redis.url, env: ORIGINS, now });
  });
  after(async () => {
    await second.close();
    await w.stop();
  });

  async function signedIn(gw: TestGateway = w.gw) {
    const p = await w.gw.principal();
    const b = new Browser(gw);
    await b.seedSession(p.id);
    return { p, b };
  }

  describe('GET /v1/session', () => {
    it('answers {valid:false} without a session, and the principal with one, on the API and auth hosts', async () => {
      const anon = new Browser(w.gw);
      expect((await anon.get('api', '/v1/session')).body).to.deep.equal({ valid: false });
      const { p, b } = await signedIn();
      for (const host of ['api', 'auth'] as const) {
        const res = await b.get(host, '/v1/session');
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.equal({ valid: true, username: p.id.split(':').pop(), principalId: p.id });
        expect(res.headers.get('cache-control')).to.equal('no-store');
      }
    });

    it('answers {valid:false} for a cookie that names no session, and clears it', async () => {
      const b = new Browser(w.gw);
      b.cookie = 'pcl_ses_' + 'x'.repeat(43);
      const res = await b.get('api', '/v1/session');
      expect(res.body).to.deep.equal({ valid: false });
      expect(res.headers.getSetCookie().join()).to.match(/portcullis_session=; Path=\/; Max-Age=0/);
      expect(b.cookie).to.equal(null);
    });

    it('is a cookie route: a PAT answers 403 pat-not-accepted', async () => {
      const p = await w.gw.principal();
      const res = await new Browser(w.gw).get('api', '/v1/session', { authorization: `Bearer ${p.token}` });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('pat-not-accepted');
    });
  });

  describe('sign-out', () => {
    it('ends the session on every instance at once: a session used after sign-out on a second instance is refused', async () => {
      const { b } = await signedIn();
      const elsewhere = new Browser(second);
      elsewhere.cookie = b.cookie;
      expect((await elsewhere.get('api', '/v1/session')).body.valid).to.equal(true);
      const out = await b.post('auth', '/v1/session/end');
      expect(out.status).to.equal(200);
      expect(out.body).to.deep.equal({ ended: true });
      expect(b.cookie).to.equal(null);
      const refused = await elsewhere.get('api', '/v1/account/api-tokens');
      expect(refused.status).to.equal(401);
      expect(refused.body.error.code).to.equal('session-ended');
      const chatRefused = await elsewhere.post('api', '/v1/chat/completions', chat);
      expect(chatRefused.status).to.equal(401);
      expect(chatRefused.body.error.code).to.equal('session-ended');
      expect((await elsewhere.get('api', '/v1/session')).body).to.deep.equal({ valid: false });
    });

    it('a new sign-in in a browser ends the session its cookie named (a fresh id every sign-in)', async () => {
      const { b } = await signedIn();
      const before = b.cookie;
      const { a } = await newPerson(new Browser(w.gw));
      const { verify } = await login(b, a);
      expect(verify.status).to.equal(200);
      expect(b.cookie).to.not.equal(before);
      const old = new Browser(w.gw);
      old.cookie = before;
      expect((await old.get('api', '/v1/session')).body.valid).to.equal(false);
      expect((await b.get('api', '/v1/session')).body.valid).to.equal(true);
    });

    it('signing out without a session is harmless', async () => {
      const res = await new Browser(w.gw).post('api', '/v1/session/end');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ended: false });
    });

    it('"sign out everywhere" ends every session of the principal, on every instance, and no one else\'s', async () => {
      const { p, b } = await signedIn();
      const phone = new Browser(second);
      await phone.seedSession(p.id);
      const { b: other } = await signedIn(second);
      const res = await b.post('api', '/v1/session/end-all');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ ended: 2 });
      expect((await phone.get('api', '/v1/session')).body.valid).to.equal(false);
      expect((await b.get('api', '/v1/session')).body.valid).to.equal(false);
      expect((await other.get('api', '/v1/session')).body.valid).to.equal(true);
    });

    it('sign-out is same-origin only, like every cookie POST', async () => {
      const { b } = await signedIn();
      b.origin = 'https://evil.example';
      const res = await b.post('api', '/v1/session/end');
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('cross-site-request');
      b.origin = w.gw.origins.console;
      expect((await b.get('api', '/v1/session')).body.valid).to.equal(true);
    });
  });

  describe('lifetimes (the gateway clock)', () => {
    afterEach(() => {
      clock = Date.now();
    });

    it('ends a session idle for sessions.idleMs, and keeps one in use', async () => {
      const { idleMs } = w.gw.holder.current.gateway.sessions;
      const { b: idle } = await signedIn();
      const { b: busy } = await signedIn();
      for (let i = 0; i < 3; i++) {
        clock += idleMs / 2;
        expect((await busy.get('api', '/v1/session')).body.valid, `touch ${i}`).to.equal(true);
      }
      expect((await idle.get('api', '/v1/account/api-tokens')).body.error.code).to.equal('session-ended');
      expect((await idle.get('api', '/v1/session')).body.valid).to.equal(false);
    });

    it('ends a session at sessions.absoluteMs however busy it is', async () => {
      const { idleMs, absoluteMs } = w.gw.holder.current.gateway.sessions;
      const { b } = await signedIn();
      const start = clock;
      while (clock + idleMs / 2 < start + absoluteMs) {
        clock += idleMs / 2;
        expect((await b.get('api', '/v1/session')).body.valid).to.equal(true);
      }
      clock = start + absoluteMs;
      expect((await b.get('api', '/v1/session')).body.valid).to.equal(false);
    });
  });

  describe('route classes', () => {
    it('a pat / cookie route (chat) takes a session from a trusted origin', async () => {
      const { b } = await signedIn();
      const res = await b.post('api', '/v1/chat/completions', chat);
      expect(res.status).to.equal(200);
      expect(res.body.billing).to.equal('free');
      const status = await b.get('api', '/v1/billing/status');
      expect(status.status).to.equal(200);
    });

    it('a cross-site cookie POST is refused 403 cross-site-request and spends nothing', async () => {
      const { b } = await signedIn();
      const before = (await w.upstream.requests()).length;
      for (const origin of ['https://evil.example', 'http://localhost:1', 'null']) {
        b.origin = origin;
        const res = await b.post('api', '/v1/chat/completions', chat);
        expect(res.status, origin).to.equal(403);
        expect(res.body.error.code).to.equal('cross-site-request');
      }
      b.origin = null;
      const noOrigin = await b.post('api', '/v1/chat/completions', chat, { 'sec-fetch-site': 'cross-site' });
      expect(noOrigin.body.error.code).to.equal('cross-site-request');
      expect((await b.post('api', '/v1/chat/completions', chat)).body.error.code).to.equal('cross-site-request');
      expect((await w.upstream.requests()).length).to.equal(before);
      // Without Origin, a browser's Sec-Fetch-Site: same-origin is proof enough.
      expect((await b.post('api', '/v1/chat/completions', chat, { 'sec-fetch-site': 'same-origin' })).status).to.equal(200);
    });

    it('a PAT never needs the same-origin check', async () => {
      const p = await w.gw.principal();
      const res = await w.gw.chat(p.token, chat, { origin: 'https://evil.example' });
      expect(res.status).to.equal(200);
    });

    it('without a PAT or a session, a pat / cookie route answers 401 unauthenticated', async () => {
      const res = await new Browser(w.gw).post('api', '/v1/chat/completions', chat);
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('unauthenticated');
    });
  });
});

describe('session cookie attributes', () => {
  const origins = (auth: string, consoleO: string, api: string) =>
    ({ auth, console: consoleO, api, site: 'http://localhost:8083', graph: 'http://localhost:8084', admin: 'http://localhost:8090' }) as const;

  it('on localhost: HttpOnly, SameSite=Lax, Path=/, no Secure, no Domain', async () => {
    const p = await cookiePolicy('sid', origins('http://localhost:8081', 'http://localhost:8082', 'http://localhost:8080'));
    expect(p).to.deep.equal({ name: 'sid', secure: false, domain: null });
    expect(setCookie(p, 'v', 3_600_000)).to.equal('sid=v; Path=/; Max-Age=3600; HttpOnly; SameSite=Lax');
  });

  it('on a real domain: Secure, and Domain = the registrable parent the hosts share', async () => {
    const p = await cookiePolicy('sid', origins('https://auth.example.com', 'https://console.example.com', 'https://api.example.com'));
    expect(setCookie(p, 'v', 1000)).to.equal('sid=v; Path=/; Max-Age=1; HttpOnly; SameSite=Lax; Secure; Domain=example.com');
    expect((await cookiePolicy('sid', origins('https://auth.x.co.uk', 'https://console.x.co.uk', 'https://x.co.uk'))).domain).to.equal('x.co.uk');
  });

  it('never scopes the cookie to a platform domain of the Public Suffix List private section', async () => {
    expect((await cookiePolicy('sid', origins('https://pc-auth.fly.dev', 'https://pc-console.fly.dev', 'https://pc-api.fly.dev'))).domain).to.equal(null);
    expect((await cookiePolicy('sid', origins('https://auth.a.github.io', 'https://console.a.github.io', 'https://api.a.github.io'))).domain).to.equal(
      'a.github.io',
    );
  });

  it('no Domain when the hosts share no registrable parent; Secure for plain http off localhost too', async () => {
    const p = await cookiePolicy('sid', origins('http://auth.example.com', 'https://console.example.org', 'https://api.example.com'));
    expect(p).to.deep.equal({ name: 'sid', secure: true, domain: null });
  });
});
