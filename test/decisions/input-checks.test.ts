/**
 * What the decision routes and `portcullis policy impact` make of odd input: a `since` too far back for a
 * date to hold is a 400 `invalid-request` (a usage error on the CLI, exit 2), never a 500 or a stack trace;
 * an empty `--since` and a file given as `--candidate` are usage errors; a listing cut by `limit` says so;
 * an unknown receipt is `decision-not-found`.
 */
import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestGateway } from '../helpers/gateway.js';
import { body } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { startDecisionGateway, type DecisionGateway } from './helpers.js';

describe('decision routes and policy impact refuse odd input by name (real redis and upstream)', function () {
  this.timeout(120_000);
  let d: DecisionGateway;
  let gw: TestGateway;
  let env: Record<string, string>;
  before(async () => {
    d = await startDecisionGateway({ redis: true });
    ({ gw, env } = d);
    const p = await gw.principal();
    for (let i = 0; i < 3; i++) expect((await gw.chat(p.token, { ...body(), messages: [{ role: 'user', content: `call ${i}` }] })).status).to.equal(200);
  });
  after(() => d?.stop());

  for (const route of ['/decisions?since=999999999d', '/policy/impact?since=999999999d', '/decisions?until=99999999999999h']) {
    it(`GET /admin${route} is 400 invalid-request`, async () => {
      const r = await gw.admin('GET', route);
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('invalid-request');
    });
  }

  it('the CLI refuses a huge or empty --since as a usage error, with no stack trace', async () => {
    const cand = mkdtempSync(join(tmpdir(), 'candidate-'));
    for (const args of [
      ['--candidate', cand, '--since', '999999999d'],
      ['--since', '999999999d'],
      ['--candidate', cand, '--since', ''],
      ['--since', ''],
    ]) {
      const r = await cli(['policy', 'impact', ...args], env);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(2);
      expect(r.stderr).to.not.match(/RangeError|\n\s+at /);
      expect(r.stderr).to.match(/since/);
    }
  });

  it('a file given as --candidate is a usage error naming it, not a report on the live files', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'candidate-')), 'guardrails.yaml');
    writeFileSync(file, 'version: x\n');
    const r = await cli(['policy', 'impact', '--candidate', file, '--since', '1h'], env);
    expect(r.code).to.equal(2);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.include(file).and.include('not a folder');
  });

  it('a listing cut by limit says so, and where to go on from', async () => {
    const cut = await gw.admin('GET', '/decisions?since=1h&limit=2');
    expect(cut.status).to.equal(200);
    expect(cut.body.data).to.have.length(2);
    expect(cut.body.truncated).to.equal(true);
    expect(cut.body.next).to.equal(cut.body.data[1].timestamp);
    const whole = await gw.admin('GET', '/decisions?since=1h&limit=100');
    expect(whole.body.data).to.have.length(3);
    expect(whole.body).to.include({ truncated: false, next: null });
  });

  it('an unknown receipt is decision-not-found', async () => {
    const r = await gw.admin('GET', '/decisions/receipt/rcpt_nosuchcall');
    expect(r.status).to.equal(404);
    expect(r.body.error.code).to.equal('decision-not-found');
  });
});
