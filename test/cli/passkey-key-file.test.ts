/**
 * `portcullis passkey sign-in --key FILE` with a FILE it cannot write: one line and exit 1, before the
 * gateway is asked for anything, so no account is made whose private key would be lost.
 */
import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli } from '../helpers/cli.js';

describe('portcullis passkey sign-in --key <a path it cannot write>', function () {
  // CLI processes, each loading TypeScript: 2.4 s on CI, 6 s on a loaded two-core machine for one test.
  this.timeout(60_000);
  let requests: string[];
  let url: string;
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(500).end();
  });
  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://localhost:${(server.address() as { port: number }).port}`;
  });
  beforeEach(() => (requests = []));
  after(() => server.close());

  it('refuses a key file in a folder that does not exist, asking the gateway nothing', async () => {
    const key = join(mkdtempSync(join(tmpdir(), 'pcl-')), 'missing', 'me.passkey.json');
    const run = await cli(['passkey', 'sign-in', '--key', key, '--auth-url', url]);
    expect(run.code).to.equal(1);
    expect(run.stderr.trim().split('\n')).to.deep.equal([
      `portcullis: cannot write the passkey file ${key}: its folder does not exist; no account was created`,
    ]);
    expect(requests).to.deep.equal([]);
  });

  it('refuses a key file that is a folder', async () => {
    const key = mkdtempSync(join(tmpdir(), 'pcl-'));
    const run = await cli(['passkey', 'sign-in', '--key', key, '--auth-url', url]);
    expect(run.code).to.equal(1);
    expect(run.stderr.trim().split('\n')).to.deep.equal([`portcullis: cannot read the passkey file ${key}: it is a folder`]);
    expect(run.stderr).to.not.match(/\n\s+at /);
    expect(requests).to.deep.equal([]);
  });

  it('leaves no empty key file behind when the gateway refuses the registration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pcl-'));
    const key = join(dir, 'me.passkey.json');
    const run = await cli(['passkey', 'sign-in', '--key', key, '--auth-url', url]);
    expect(run.code).to.equal(1);
    expect(requests).to.deep.equal(['POST /v1/passkey/register/options']);
    const again = await cli(['passkey', 'sign-in', '--key', key, '--auth-url', url]);
    expect(again.stderr, 'a second run registers again rather than reading an empty file').to.not.contain('JSON');
  });
});
