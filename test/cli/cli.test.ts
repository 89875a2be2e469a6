/**
 * The `portcullis` CLI as an operator runs it: `check` on good and bad configuration, and the `admin`
 * commands against a running gateway — the set-up path of the README walk-through.
 */
import { expect } from 'chai';
import { configRoot, editFile, REPO, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { cli } from '../helpers/cli.js';

describe('portcullis CLI', () => {
  it('check: exits 0 on the shipped configuration', async () => {
    const r = await cli(['check', '--root', REPO]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('configuration is valid');
  });

  it('check: exits non-zero naming the file and path of each problem', async () => {
    const root = configRoot();
    editFile(root, 'rules/rungs.yaml', (t) => t.replace('tokensPerDay: 102400', 'tokensPerDay: lots'));
    const r = await cli(['check', '--root', root]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('rules/rungs.yaml: /rungs/0/tokensPerDay must be integer');
  });

  describe('admin', function () {
    // Each command is a fresh Node process loading the CLI's TypeScript (seconds on a busy two-core machine),
    // and the first test runs seven of them.
    this.timeout(120_000);
    let gw: TestGateway;
    let up: RecordingUpstream;
    let env: Record<string, string>;
    before(async () => {
      up = await startRecordingUpstream();
      gw = await startTestGateway({ upstreamUrl: up.baseUrl });
      env = { PORTCULLIS_ADMIN_URL: gw.adminUrl, PORTCULLIS_ADMIN_TOKEN: gw.adminToken };
    });
    after(async () => {
      await gw.close();
      await up.stop();
    });

    it('creates a principal, issues, lists and revokes tokens, grants a rung and a scope', async () => {
      const created = await cli(['admin', 'principal', 'create', '--tenant', 'acme'], env);
      expect(created.code, created.stderr).to.equal(0);
      const principal = created.stdout.trim();
      expect(principal).to.equal('did:web:portcullis.localhost:tenant:acme');

      const issued = await cli(['admin', 'token', 'issue', principal, '--label', 'agent'], env);
      const token = issued.stdout.trim();
      expect(token).to.match(/^pcl_pat_[0-9A-Za-z]{38}$/);
      expect(issued.stdout).to.equal(`${token}\n`);

      const red = { model: 'red-whitehacker-a', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] };
      expect((await gw.chat(token, red)).body.error.code).to.equal('verification-required');
      const granted = await cli(['admin', 'principal', 'grant', principal, '--rung', 'card'], env);
      expect(granted.code, granted.stderr).to.equal(0);
      expect((await gw.chat(token, red)).status).to.equal(200);
      expect((await gw.chat(token, { ...red, task: 'vulnerability-triage' })).body.error.code).to.equal('business-rung-required');

      const scoped = await cli(['admin', 'principal', 'scope', principal, '--scope', 'client-x', '--tasks', 'code-review,remediation'], env);
      expect(scoped.code, scoped.stderr).to.equal(0);
      const shown = JSON.parse((await cli(['admin', 'principal', 'show', principal], env)).stdout);
      expect(shown.scopes.map((s: { id: string }) => s.id)).to.deep.equal(['owned', 'client-x']);

      const list = await cli(['admin', 'token', 'list', principal], env);
      const [line] = list.stdout.trim().split('\n');
      const [tokenId, label] = line!.split('\t');
      expect(label).to.equal('agent');
      const revoked = await cli(['admin', 'token', 'revoke', tokenId!], env);
      expect(revoked.code).to.equal(0);
      expect((await gw.chat(token, red)).body.error.code).to.equal('token-revoked');
    });

    it('revokes legacy tokens in bulk', async () => {
      const principal = (await cli(['admin', 'principal', 'create'], env)).stdout.trim();
      const legacy = (await cli(['admin', 'token', 'issue', principal, '--label', 'old', '--legacy'], env)).stdout.trim();
      expect(legacy).to.match(/^pcl_v1_/);
      const r = await cli(['admin', 'token', 'revoke-legacy'], env);
      expect(r.stdout).to.match(/revoked [1-9]\d* legacy token/);
    });

    it('fails clearly on a wrong operator token, an unknown rung, and a gateway that is not there', async () => {
      const wrong = await cli(['admin', 'principal', 'create'], { ...env, PORTCULLIS_ADMIN_TOKEN: 'nope' });
      expect(wrong.code).to.equal(2);
      expect(wrong.stderr).to.contain('admin-unauthorized');
      const principal = (await cli(['admin', 'principal', 'create'], env)).stdout.trim();
      const rung = await cli(['admin', 'principal', 'grant', principal, '--rung', 'platinum'], env);
      expect(rung.stderr).to.contain('unknown-rung');
      const gone = await cli(['admin', 'principal', 'create'], { ...env, PORTCULLIS_ADMIN_URL: 'http://127.0.0.1:9' });
      expect(gone.stderr).to.contain('cannot reach the admin API');
    });
  });
});
