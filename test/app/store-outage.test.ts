/**
 * The store is authoritative and the gateway fails closed without it: with Redis gone, a call is refused
 * 503 `store-unavailable` (nothing admitted on a guess, nothing forwarded), and service resumes by itself
 * once Redis is back.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';

describe('store outage', () => {
  let w: World;
  const body = { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'outage' }] };

  before(async () => {
    w = await startWorld();
  });
  after(() => w.stop());

  it('answers 503 store-unavailable while Redis is down, forwards nothing, and recovers', async () => {
    const { token } = await w.gw.principal();
    await w.redis.kill('SIGKILL');
    const down = await w.gw.chat(token, body);
    expect(down.status).to.equal(503);
    expect(down.body.error.code).to.equal('store-unavailable');
    expect(await w.upstream.requests()).to.have.length(0);
    await w.redis.restart();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await w.gw.chat(token, body)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).to.equal(200);
  });
});
