/**
 * The README's walk-through from nothing to a PAT, as a person with a terminal runs it: `portcullis passkey
 * sign-in` registers a software passkey (creating an account) and prints the session cookie; curl issues a
 * PAT with it; the PAT calls the chat API. A second run signs in with the saved passkey.
 */
import { expect } from 'chai';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { cli } from '../helpers/cli.js';

describe('portcullis passkey sign-in (the walk-through)', function () {
  // CLI processes, each loading TypeScript: 2.6 s on CI, 3.7 s on a loaded two-core machine for one test.
  this.timeout(60_000);
  let gw: TestGateway;
  const key = join(mkdtempSync(join(tmpdir(), 'portcullis-passkey-')), 'me.passkey.json');
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  it('creates an account, and its cookie issues a PAT that calls the chat API', async () => {
    const first = await cli(['passkey', 'sign-in', '--key', key, '--username', 'ada', '--auth-url', gw.origins.auth]);
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stderr).to.match(/created account did:web:portcullis\.localhost:tenant:[0-9a-f]{16} \(ada\)/);
    expect(statSync(key).mode & 0o777).to.equal(0o600);
    const cookie = first.stdout.trim();
    expect(cookie).to.match(/^portcullis_session=pcl_ses_[A-Za-z0-9_-]{43}$/);

    // curl -X POST $API/v1/account/api-token -H "Cookie: $COOKIE" -H "Origin: $CONSOLE" -d '{"label":"my agent"}'
    const issued = await fetch(`${gw.apiUrl}/v1/account/api-token`, {
      method: 'POST',
      headers: { cookie, origin: gw.origins.console, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'my agent' }),
    });
    expect(issued.status).to.equal(201);
    const { token } = (await issued.json()) as { token: string };
    const call = await gw.chat(token, { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'Review this diff' }] });
    expect(call.status).to.equal(200);

    const again = await cli(['passkey', 'sign-in', '--key', key, '--auth-url', gw.origins.auth]);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.match(/signed in as did:web:portcullis\.localhost:tenant:[0-9a-f]{16} \(ada\)/);
    const session = await fetch(`${gw.apiUrl}/v1/session`, { headers: { cookie: again.stdout.trim() } });
    expect(((await session.json()) as { username: string }).username).to.equal('ada');
  });

  it('says why when the gateway cannot be reached, and exits 1', async () => {
    const res = await cli(['passkey', 'sign-in', '--key', `${key}.other`, '--auth-url', 'http://127.0.0.1:9']);
    expect(res.code).to.equal(1);
    expect(res.stderr).to.contain('cannot reach');
  });
});
