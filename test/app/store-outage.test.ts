/**
 * The store is authoritative and the gateway fails closed without it: with Redis gone, a call is refused
 * 503 `store-unavailable` (nothing admitted on a guess, nothing forwarded), and service resumes by itself
 * once Redis is back. The log says so as an outage: the identity cache's tracking connection lost and
 * restored, each refused request a warning with its route pattern (never the path, which holds ids).
 */
import { expect } from 'chai';
import { createLogger } from '../../src/log.js';
import { startWorld, type World } from '../helpers/world.js';
import { until } from '../helpers/wait.js';

describe('store outage', () => {
  let w: World;
  const body = { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'outage' }] };

  const lines: Record<string, unknown>[] = [];
  const events = (event: string) => lines.filter((l) => l['event'] === event);

  before(async () => {
    w = await startWorld({ log: createLogger('info', (l) => void lines.push(JSON.parse(l) as Record<string, unknown>)) });
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

  it('logs the lost tracking connection, each 503 as an outage by route pattern, and the restored connection', async () => {
    const { token } = await w.gw.principal();
    lines.length = 0;
    await w.redis.kill('SIGKILL');
    await until(() => events('store.identity_tracking.lost').length === 1, { what: 'the tracking connection reported lost' });
    const receipt = await fetch(`${w.gw.apiUrl}/v1/receipts/rcpt_secretish_id_123`, { headers: { authorization: `Bearer ${token}` } });
    expect(receipt.status).to.equal(503);
    const refused = events('request.store_unavailable');
    expect(refused).to.have.length(1);
    expect(refused[0]).to.include({ level: 'warn', route: '/v1/receipts/:id' });
    expect(refused[0]).to.not.have.property('path');
    expect(JSON.stringify(lines)).to.not.include('rcpt_secretish_id_123');
    expect(lines.filter((l) => l['level'] === 'error')).to.deep.equal([]);
    await w.redis.restart();
    await until(() => events('store.identity_tracking.restored').length === 1, { what: 'the tracking connection reported restored' });
    await until(async () => (await w.gw.chat(token, body)).status === 200, { what: 'a call answered once Redis is back' });
  });
});
