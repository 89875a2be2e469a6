/**
 * Wallet sign-in fails closed with its store: with Redis gone, a nonce cannot be handed out and a signed
 * message cannot be redeemed (503 `store-unavailable`, no session cookie), and nothing is half-done: once
 * Redis is back (its append-only file kept the nonce), the same signed message signs in. That holds too when
 * the store fails the sign-in after its nonce was taken (the identity cache still down while the main
 * connection answers, as after a restart): the nonce is given back, not spent on an answer of 503.
 */
import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { holdTrackingConnectionsDown } from '../helpers/identity-cache.js';
import { newWallet, post, siweText, type Fields } from '../helpers/wallet.js';
import { until } from '../helpers/wait.js';

describe('wallet sign-in during a store outage', () => {
  let redis: RedisServer;
  let gw: TestGateway;
  before(async () => {
    redis = await startRedisServer();
    gw = await startTestGateway({ redisUrl: redis.url });
  });
  after(async () => {
    await gw.close();
    await redis.stop();
  });

  /** Sends the signed message until the store answers (503 until then): it must sign in, making the account. */
  async function signsInOnceAnswered(message: string, signature: string, when: string): Promise<void> {
    const after = await until(
      async () => {
        const r = await post(gw.urls.auth, '/v1/siwe/verify', { message, signature });
        return r.status === 503 ? null : r;
      },
      { what: `the sign-in to be answered once ${when}` },
    );
    expect(after.status, JSON.stringify(after.body)).to.equal(200);
    expect(after.body).to.include({ verified: true, created: true });
  }

  it('answers 503 store-unavailable, sets no cookie, spends no nonce, and signs in once Redis is back', async () => {
    const auth = gw.urls.auth;
    const wallet = newWallet();
    const fields = (await post(auth, '/v1/siwe/options')).body as Fields;
    const message = siweText(wallet.address, fields);
    const signature = await wallet.signMessage({ message });
    await redis.kill('SIGKILL');

    const nonce = await post(auth, '/v1/siwe/nonce');
    expect([nonce.status, nonce.body.error.code]).to.deep.equal([503, 'store-unavailable']);
    const res = await fetch(`${auth}/v1/siwe/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: gw.origins.auth },
      body: JSON.stringify({ message, signature }),
    });
    expect(res.status).to.equal(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('store-unavailable');
    expect(res.headers.getSetCookie()).to.deep.equal([]);

    await redis.restart();
    await signsInOnceAnswered(message, signature, 'Redis is back');
  });

  it('gives the nonce back when the store fails the sign-in after taking it: the same message signs in after', async () => {
    const auth = gw.urls.auth;
    const wallet = newWallet();
    const fields = (await post(auth, '/v1/siwe/options')).body as Fields;
    const message = siweText(wallet.address, fields);
    const signature = await wallet.signMessage({ message });
    // The main connection answers (the nonce is taken); the identity cache, read next, fails closed.
    const release = await holdTrackingConnectionsDown(redis.port);
    let cut;
    try {
      cut = await post(auth, '/v1/siwe/verify', { message, signature });
    } finally {
      await release();
    }
    expect([cut.status, cut.body.error?.code]).to.deep.equal([503, 'store-unavailable']);
    await signsInOnceAnswered(message, signature, 'the identity cache is back');
    // And it was spent by that sign-in: the same message again is refused.
    const again = await post(auth, '/v1/siwe/verify', { message, signature });
    expect([again.status, again.body.error?.code]).to.deep.equal([400, 'challenge-invalid']);
  });
});
