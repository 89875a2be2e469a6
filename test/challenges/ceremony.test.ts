/**
 * A request's challenges go back to the store when, and only when, the request fails on the store: an
 * outage half-way through a ceremony must not spend the caller's challenge, and every other failure must.
 * A real Koa app with the auth host's exit order (single exit, then the put-back) over the memory store; the
 * handlers stand for a ceremony's later steps.
 */
import { expect } from 'chai';
import Koa, { type Context } from 'koa';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { putBackOnOutage, requestChallenges } from '../../src/challenges/ceremony.js';
import { MemoryChallengeStore } from '../../src/challenges/memory-store.js';
import { GatewayError } from '../../src/errors.js';
import { StoreUnavailable } from '../../src/store/errors.js';
import { singleExit } from '../../src/app/single-exit.js';
import { createLogger } from '../../src/log.js';

describe('challenges taken by a request that fails on the store', () => {
  let store: MemoryChallengeStore;
  let now = 1_900_000_000_000;
  let then: (ctx: Context) => Promise<void>;
  let server: Server;
  let base: string;
  before(async () => {
    const app = new Koa();
    app.use(singleExit(createLogger('error', () => undefined)));
    app.use(putBackOnOutage({ put: (...a) => store.put(...a), take: (...a) => store.take(...a) }, () => now));
    app.use(async (ctx) => {
      const held = await requestChallenges(ctx, store).take('siwe', 'n1', now);
      if (!held) throw new GatewayError('challenge-invalid');
      await then(ctx);
      ctx.body = { ok: true };
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(async () => {
    store = new MemoryChallengeStore();
    await store.put('siwe', 'n1', { data: { who: 'x' }, expiresAt: now + 60_000 }, now);
  });
  const call = async () => {
    const res = await fetch(base);
    return [res.status, ((await res.json()) as { error?: { code: string } }).error?.code ?? 'ok'];
  };

  for (const [name, outage] of [
    ['the store is unreachable', () => new StoreUnavailable('connection lost')],
    ['a step answers store-unavailable', () => new GatewayError('store-unavailable')],
  ] as const) {
    it(`puts the challenge back when ${name}; the retry then succeeds and spends it`, async () => {
      then = async () => {
        throw outage();
      };
      expect(await call()).to.deep.equal([503, 'store-unavailable']);
      then = async () => undefined;
      expect(await call()).to.deep.equal([200, 'ok']);
      expect(await call()).to.deep.equal([400, 'challenge-invalid']);
    });
  }

  it('keeps it spent when the request fails for any other reason', async () => {
    then = async () => {
      throw new GatewayError('wallet-signature-invalid');
    };
    expect(await call()).to.deep.equal([401, 'wallet-signature-invalid']);
    then = async () => undefined;
    expect(await call()).to.deep.equal([400, 'challenge-invalid']);
  });

  it('does not bring back a challenge whose end passed while the request ran', async () => {
    then = async () => {
      now += 120_000;
      throw new StoreUnavailable('timed out');
    };
    expect(await call()).to.deep.equal([503, 'store-unavailable']);
    then = async () => undefined;
    expect(await store.take('siwe', 'n1', now - 120_000)).to.equal(null);
  });
});
