/**
 * Sessions fail closed with the store: with Redis gone, a session is neither trusted nor declared ended —
 * every cookie route and sign-in answers 503 `store-unavailable`, sets no cookie and issues nothing — and
 * the same session works again once Redis is back.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson } from '../helpers/passkey.js';
import { until } from '../helpers/wait.js';

describe('sessions during a store outage', () => {
  let w: World;
  before(async () => {
    w = await startWorld();
  });
  after(() => w.stop());

  it('answers 503 store-unavailable on every session path, and recovers with the same session', async () => {
    const b = new Browser(w.gw, w.gw.origins.auth);
    const { a } = await newPerson(b);
    const cookie = b.cookie;
    await w.redis.kill('SIGKILL');
    try {
      b.origin = w.gw.origins.console;
      for (const res of [
        await b.get('api', '/v1/session'),
        await b.get('api', '/v1/account/api-tokens'),
        await b.post('api', '/v1/account/api-token', { label: 'x' }),
        await b.post('auth', '/v1/session/end'),
      ]) {
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.body.error.code).to.equal('store-unavailable');
        expect(res.headers.getSetCookie()).to.deep.equal([]);
      }
      const other = new Browser(w.gw, w.gw.origins.auth);
      const options = await other.post('auth', '/v1/passkey/login/options', {});
      expect(options.status).to.equal(503);
      expect(b.cookie).to.equal(cookie);
    } finally {
      await w.redis.restart();
    }
    await until(async () => (await b.get('api', '/v1/session')).body.valid === true, { what: 'the session to be valid again once Redis is back' });
    expect((await login(new Browser(w.gw), a)).verify.status).to.equal(200);
  });
});
