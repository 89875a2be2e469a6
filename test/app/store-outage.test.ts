/**
 * The store is authoritative and the gateway fails closed without it: with Redis gone, a call is refused
 * 503 `store-unavailable` (nothing admitted on a guess, nothing forwarded), and service resumes by itself
 * once Redis is back.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { until } from '../helpers/wait.js';

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
    await until(async () => (await w.gw.chat(token, body)).status === 200, { what: 'a call answered once Redis is back' });
  });
});
