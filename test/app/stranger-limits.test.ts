/**
 * Limits on what a stranger or a fresh account can make the gateway create, through the public routes of
 * a gateway behind a proxy (`rateLimits.addressHeader`): new accounts per address per hour (any sign-in
 * method; an IPv6 address counts as its /64), sign-in challenges and nonces per address, large static
 * documents per address (a 304 to a client holding the version is free), research applications per
 * account per day and in size. Existing accounts still sign in, another address is unaffected, a refused
 * creation leaves nothing behind, and the free allowance of a new account is unchanged.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { configRoot, editFile, relaxStrangerLimits, REPO } from '../helpers/gateway.js';
import { Browser, type Answer } from '../helpers/browser.js';
import { login, register, SoftAuthenticator } from '../helpers/passkey.js';
import { newWallet, siweText } from '../helpers/wallet.js';
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { join } from 'node:path';

/** A browser behind the proxy: every request says it comes from `from`. */
class From extends Browser {
  constructor(
    w: World,
    readonly from: string,
  ) {
    super(w.gw, w.gw.origins.auth);
  }
  override request(
    host: Parameters<Browser['request']>[0],
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    return super.request(host, method, path, body, { 'x-forwarded-for': this.from, ...headers });
  }
}

const APPLICATION = {
  verificationMode: 'card',
  policyVersion: '2026-11',
  consent: { acceptableUse: true, localExecutionBoundary: true },
  authorizedResearch: { authorization: 'owned', targets: [{ kind: 'repository', identifier: 'github.com/acme/app' }] },
  purpose: 'triage the findings of our own fuzzing runs',
  scope: { id: 'acme-app', tasks: ['code-review', 'vulnerability-triage'] },
};

describe('limits on what strangers and new accounts can create', function () {
  this.timeout(60_000);
  let w: World;
  before(async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('failedAuthPerAddress: 30', 'failedAuthPerAddress: 30\n  addressHeader: x-forwarded-for')
        .replace('signUpsPerAddressHour: 10', 'signUpsPerAddressHour: 3')
        .replace('challengesPerAddress: 30', 'challengesPerAddress: 6')
        .replace('staticPerAddress: 30', 'staticPerAddress: 2')
        .replace('applicationsPerAccountDay: 10', 'applicationsPerAccountDay: 2')
        .replace('applicationBytes: 16384', 'applicationBytes: 4096'),
    );
    w = await startWorld({ root });
  });
  after(() => w.stop());

  const expect429 = (res: Answer, what: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(429);
    expect(res.body.error.code).to.equal('rate-limited');
    expect(res.body.error.message).to.contain(what);
    expect(Number(res.headers.get('retry-after'))).to.be.at.least(1);
  };

  it('ships limits that are on, and a test gateway only raises the ones a test did not set', () => {
    const shipped = readFileSync(join(REPO, 'config/gateway.yaml'), 'utf8');
    for (const key of ['mcpPerAddress', 'challengesPerAddress', 'staticPerAddress', 'signUpsPerAddressHour', 'applicationsPerAccountDay']) {
      expect(shipped, key).to.match(new RegExp(`^  ${key}: \\d+$`, 'm'));
      expect(relaxStrangerLimits(shipped), key).to.match(new RegExp(`^  ${key}: 1000000$`, 'm'));
    }
    expect(relaxStrangerLimits(shipped.replace('signUpsPerAddressHour: 10', 'signUpsPerAddressHour: 3'))).to.match(/^ {2}signUpsPerAddressHour: 3$/m);
  });

  it('limits new accounts per address across methods; existing accounts still sign in; another address is free', async () => {
    const from = '198.51.100.61';
    const made: SoftAuthenticator[] = [];
    for (let i = 0; i < 3; i++) {
      const a = new SoftAuthenticator();
      const r = await register(new From(w, from), a);
      expect(r.verify.status, JSON.stringify(r.verify.body)).to.equal(200);
      made.push(a);
    }
    // A fourth passkey account from the address is refused, and nothing was made for it.
    const fourth = new SoftAuthenticator();
    expect429((await register(new From(w, from), fourth)).verify, 'new accounts');
    expect((await login(new From(w, '198.51.100.99'), fourth)).verify.status).to.not.equal(200);
    // So is a first SIWE sign-in (a new account) from it.
    const b = new From(w, from);
    const wallet = newWallet();
    const fields = (await b.post('auth', '/v1/siwe/options')).body;
    const message = siweText(wallet.address, fields);
    expect429(await b.post('auth', '/v1/siwe/verify', { message, signature: await wallet.signMessage({ message }) }), 'new accounts');
    // The accounts it made still sign in from it; another address still signs up.
    expect((await login(new From(w, from), made[0]!)).verify.status).to.equal(200);
    expect((await register(new From(w, '198.51.100.62'), new SoftAuthenticator())).verify.status).to.equal(200);
  });

  it('counts an IPv6 address as its /64 for new accounts', async () => {
    for (let i = 1; i <= 3; i++) expect((await register(new From(w, `2001:db8:5:6::${i}`), new SoftAuthenticator())).verify.status).to.equal(200);
    expect429((await register(new From(w, '2001:db8:5:6:ffff::1'), new SoftAuthenticator())).verify, 'new accounts');
    expect((await register(new From(w, '2001:db8:5:7::1'), new SoftAuthenticator())).verify.status).to.equal(200);
  });

  it('a brand-new account keeps the free allowance the catalog gives it', async () => {
    const b = new From(w, '198.51.100.71');
    const r = await register(b, new SoftAuthenticator());
    expect(r.verify.status).to.equal(200);
    const status = await b.get('api', '/v1/research/status');
    expect(status.status, JSON.stringify(status.body)).to.equal(200);
    const shipped = w.gw.holder.current.bundle.rungs.data.freeAllowance;
    expect(shipped.perDay).to.be.greaterThan(0);
    expect(status.body.freeTier).to.deep.include({ unit: shipped.unit, perDay: shipped.perDay, used: 0, remaining: shipped.perDay });
  });

  it('limits challenges and nonces per address (IPv6: per /64), on every route that stores one', async () => {
    const routes: Array<[string, unknown]> = [
      ['/v1/siwe/nonce', undefined],
      ['/v1/siwe/options', {}],
      ['/v1/passkey/login/options', {}],
      ['/v1/passkey/register/options', {}],
      ['/v1/recovery/challenge', {}],
      ['/v1/siwe/nonce', undefined],
    ];
    const b = new From(w, '2001:db8:9:9::1');
    for (const [path, body] of routes) expect((await b.post('auth', path, body ?? {})).status, path).to.equal(200);
    expect429(await new From(w, '2001:db8:9:9::2').post('auth', '/v1/recovery/challenge', {}), 'challenges');
    expect429(await b.post('auth', '/v1/passkey/login/options', {}), 'challenges');
    expect((await new From(w, '2001:db8:9:a::1').post('auth', '/v1/siwe/nonce', {})).status).to.equal(200);
  });

  it('limits large static documents per address; a 304 to a client holding the version is not counted', async () => {
    // undici's request, not fetch: fetch adds `cache-control: no-cache` to a conditional request.
    const get = async (from: string, headers: Record<string, string> = {}, path = '/llms-full.txt') => {
      const res = await request(`${w.gw.urls.site}${path}`, { headers: { 'x-forwarded-for': from, ...headers } });
      const text = await res.body.text();
      return { status: res.statusCode, etag: res.headers['etag'] as string | undefined, text };
    };
    const first = await get('203.0.113.81');
    expect(first.status).to.equal(200);
    expect(first.etag).to.match(/^"/);
    expect((await get('203.0.113.81')).status).to.equal(200);
    const third = await get('203.0.113.81');
    expect(third.status).to.equal(429);
    expect(JSON.parse(third.text).error.code).to.equal('rate-limited');
    for (let i = 0; i < 3; i++) {
      const cached = await get('203.0.113.81', { 'if-none-match': first.etag! });
      expect(cached.status).to.equal(304);
      expect(cached.text).to.equal('');
    }
    expect((await get('203.0.113.81', {}, '/docs/api.md')).status).to.equal(429);
    expect((await get('203.0.113.82')).status).to.equal(200);
  });

  it('limits research applications per account and their size; a refused one stores nothing, an invalid one counts nothing', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const apply = async (body: unknown) => {
      const res = await fetch(`${w.gw.apiUrl}/v1/research/applications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any, headers: res.headers };
    };
    const big = await apply({
      ...APPLICATION,
      purpose: 'x'.repeat(3990),
      authorizedResearch: { ...APPLICATION.authorizedResearch, targets: Array(3).fill(APPLICATION.authorizedResearch.targets[0]) },
    });
    expect(big.status, JSON.stringify(big.body)).to.equal(413);
    expect(big.body.error.code).to.equal('payload-too-large');
    expect((await apply({ ...APPLICATION, scope: { id: 'x', tasks: ['no-such-task'] } })).status).to.equal(400);
    expect((await apply(APPLICATION)).status).to.equal(202);
    expect((await apply(APPLICATION)).status).to.equal(202);
    expect429(await apply(APPLICATION), 'research applications');
    const listed = await fetch(`${w.gw.adminUrl}/admin/applications`, { headers: { authorization: 'Bearer test-operator-token' } });
    const mine = ((await listed.json()) as any).data.filter((a: any) => a.principalId === p.id);
    expect(mine).to.have.length(2);
    // Another account is not affected.
    const q = await w.gw.principal({ rung: 'card' });
    const other = await fetch(`${w.gw.apiUrl}/v1/research/applications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${q.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(APPLICATION),
    });
    expect(other.status).to.equal(202);
  });
});
