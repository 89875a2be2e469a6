/**
 * A POST that needs no body needs no content-type: sent with no bytes at all — however it is framed (no
 * length, `content-length: 0`, an empty chunked body) and whatever content-type it names or leaves out — it
 * is answered as the empty body it is. A body that has bytes is still JSON or 415. Through the public routes
 * (the auth host's passkey sign-in options, the admin host's application decisions), on both stores.
 */
import { expect } from 'chai';
import { request } from 'node:http';
import { rawConnect, parseRaw } from '../helpers/raw-http.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

/**
 * One POST with exactly these headers and body bytes. node:http frames a POST itself (content-length: 0 when
 * nothing is written), so a request with neither length nor chunking — as `curl -X POST` sends it — is
 * written on a raw socket.
 */
async function post(url: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  if (body === undefined && !('content-length' in headers) && !('transfer-encoding' in headers)) {
    const u = new URL(url);
    const conn = await rawConnect(url);
    const lines = [`POST ${u.pathname} HTTP/1.1`, `host: ${u.host}`, 'connection: close', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    conn.socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    return parseRaw(await conn.closed);
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const FRAMINGS: Array<[string, Record<string, string>]> = [
  ['no length', {}],
  ['content-length: 0', { 'content-length': '0' }],
  ['an empty chunked body', { 'transfer-encoding': 'chunked' }],
];

for (const kind of ['redis', 'memory'] as const) {
  describe(`a bodyless POST (${kind} store)`, () => {
    let redis: RedisServer | undefined;
    let gw: TestGateway;
    let auth: string;
    let origin: string;

    before(async () => {
      if (kind === 'redis') redis = await startRedisServer();
      gw = await startTestGateway(redis ? { redisUrl: redis.url } : {});
      auth = gw.urls.auth;
      origin = gw.origins.auth;
    });
    after(async () => {
      await gw.close();
      await redis?.stop();
    });

    for (const [framing, headers] of FRAMINGS) {
      for (const type of [null, 'application/json', 'text/plain']) {
        it(`is answered with ${framing} and ${type ? `content-type ${type}` : 'no content-type'}`, async () => {
          const h = { origin, ...headers, ...(type ? { 'content-type': type } : {}) };
          const options = await post(`${auth}/v1/passkey/login/options`, h);
          expect(options.status).to.equal(200);
          expect(options.body.challenge).to.be.a('string');
          const approve = await post(`${gw.adminUrl}/admin/applications/app_none/approve`, { authorization: `Bearer ${gw.adminToken}`, ...h });
          expect(approve.status).to.equal(404);
          expect(approve.body.error.code).to.equal('application-not-found');
        });
      }
    }

    it('still refuses a body that has bytes and is not JSON (415), and takes one that is', async () => {
      const text = await post(`${auth}/v1/passkey/login/options`, { origin, 'content-type': 'text/plain' }, '{}');
      expect(text.status).to.equal(415);
      expect(text.body.error.code).to.equal('unsupported-media-type');
      const json = await post(`${auth}/v1/passkey/login/options`, { origin, 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, '{}');
      expect(json.status).to.equal(200);
    });
  });
}
