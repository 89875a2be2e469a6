/**
 * The recovery procedure from a terminal, as docs/sign-in.md walks it: a new phrase, set-up with a signed-in
 * session (the one-time secret printed once), then — the passkey lost — start with phrase and secret,
 * refused before the delay, and a session after it (the gateway's clock moved, not the wall's).
 */
import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { cli } from '../helpers/cli.js';

describe('portcullis recovery (the procedure)', function () {
  // The procedure runs six CLI processes in one test, each loading TypeScript: 8 s on CI, 19 s on a loaded
  // two-core machine, which would pass mocha's 30 s default with a little more load.
  this.timeout(120_000);
  let gw: TestGateway;
  let clock = Date.now();
  before(async () => {
    gw = await startTestGateway({ now: () => clock });
  });
  after(() => gw.close());

  it('new phrase, set-up, start, refused before the delay, a session after it', async () => {
    const auth = ['--auth-url', gw.origins.auth];
    const key = join(mkdtempSync(join(tmpdir(), 'portcullis-recovery-')), 'me.passkey.json');
    const signIn = await cli(['passkey', 'sign-in', '--key', key, '--username', 'ada', ...auth]);
    const cookie = signIn.stdout.trim();
    const phrase = (await cli(['recovery', 'new-phrase'])).stdout.trim();
    expect(phrase.split(' ')).to.have.length(12);
    const env = { PORTCULLIS_RECOVERY_PHRASE: phrase };

    const setup = await cli(['recovery', 'setup', '--cookie', cookie, ...auth], env);
    expect(setup.code, setup.stderr).to.equal(0);
    const secret = setup.stdout.trim();
    expect(secret).to.match(/^[a-z2-9]{4}(-[a-z2-9]{1,4}){6}$/);

    const start = await cli(['recovery', 'start', '--secret', secret, ...auth], env);
    expect(start.code, start.stderr).to.equal(0);
    const completesAt = Date.parse(start.stdout.trim());
    expect(completesAt - clock).to.equal(48 * 3_600_000);

    const early = await cli(['recovery', 'complete', ...auth], env);
    expect(early.code).to.equal(1);
    expect(early.stderr).to.contain('recovery-not-ready');

    clock = completesAt;
    const done = await cli(['recovery', 'complete', ...auth], env);
    expect(done.code, done.stderr).to.equal(0);
    expect(done.stderr).to.contain('(ada)');
    const session = await fetch(`${gw.apiUrl}/v1/session`, { headers: { cookie: done.stdout.trim() } });
    expect(((await session.json()) as { username: string }).username).to.equal('ada');
  });

  it('refuses something that is not a phrase, before sending anything', async () => {
    const res = await cli(['recovery', 'start', '--secret', 'x', '--auth-url', gw.origins.auth], { PORTCULLIS_RECOVERY_PHRASE: 'not a phrase at all' });
    expect(res.code).to.equal(1);
    expect(res.stderr).to.contain('not a recovery phrase');
  });
});
