/**
 * The person's own research applications (API host, cookie only): GET /v1/account/applications lists what a
 * browser session's principal applied for and where each stands (submitted, then approved or refused with
 * the operator's note), oldest first, never another account's, and without the purpose or targets. A PAT
 * cannot read it (403 `pat-not-accepted`), nor a request without a session (401).
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { Browser } from '../helpers/browser.js';

const APPLICATION = {
  verificationMode: 'card',
  policyVersion: '2026-11',
  consent: { acceptableUse: true, localExecutionBoundary: true },
  authorizedResearch: { authorization: 'owned', targets: [{ kind: 'repository', identifier: 'github.com/acme/app' }] },
  purpose: 'triage the findings of our own fuzzing runs',
  scope: { id: 'acme-app', tasks: ['code-review'] },
};

describe('account applications route', () => {
  let w: World;
  before(async () => {
    w = await startWorld();
  });
  after(() => w.stop());

  async function person() {
    const p = await w.gw.principal({ rung: 'card' });
    const b = new Browser(w.gw);
    await b.seedSession(p.id);
    return { p, b };
  }

  it("lists the session principal's own applications with their state, oldest first, updated by an operator's decision", async () => {
    const { b } = await person();
    expect((await b.get('api', '/v1/account/applications')).body).to.deep.equal({ data: [] });
    const first = await b.post('api', '/v1/research/applications', APPLICATION);
    expect(first.status).to.equal(202);
    const second = await b.post('api', '/v1/research/applications', { ...APPLICATION, scope: { id: 'acme-web', tasks: ['code-review'] } });
    expect(second.status).to.equal(202);

    const listed = await b.get('api', '/v1/account/applications');
    expect(listed.status).to.equal(200);
    expect(listed.headers.get('cache-control')).to.equal('no-store');
    expect(listed.body.data.map((a: { id: string }) => a.id)).to.deep.equal([first.body.id, second.body.id]);
    expect(listed.body.data[0]).to.deep.equal({
      id: first.body.id,
      status: 'submitted',
      submittedAt: first.body.submittedAt,
      decidedAt: null,
      decisionNote: null,
      verificationMode: 'card',
      policyVersion: '2026-11',
      scope: APPLICATION.scope,
    });
    expect(JSON.stringify(listed.body)).to.not.contain('fuzzing').and.not.contain('github.com/acme/app');

    expect((await w.gw.admin('POST', `/applications/${first.body.id}/approve`, { note: 'own repository' })).status).to.equal(200);
    expect((await w.gw.admin('POST', `/applications/${second.body.id}/refuse`, { reason: 'name the repository' })).status).to.equal(200);
    const decided = (await b.get('api', '/v1/account/applications')).body.data;
    expect(decided.map((a: { status: string; decisionNote: string }) => [a.status, a.decisionNote])).to.deep.equal([
      ['approved', 'own repository'],
      ['refused', 'name the repository'],
    ]);
    for (const a of decided) expect(Date.parse(a.decidedAt)).to.be.at.least(Date.parse(a.submittedAt));
  });

  it("never shows another account's applications", async () => {
    const one = await person();
    const other = await person();
    const filed = await one.b.post('api', '/v1/research/applications', APPLICATION);
    expect(filed.status).to.equal(202);
    expect((await other.b.get('api', '/v1/account/applications')).body).to.deep.equal({ data: [] });
    expect((await one.b.get('api', '/v1/account/applications')).body.data.map((a: { id: string }) => a.id)).to.deep.equal([filed.body.id]);
  });

  it('answers a PAT 403 pat-not-accepted and a request without a session 401, in the error shape', async () => {
    const { p } = await person();
    const withPat = await fetch(`${w.gw.apiUrl}/v1/account/applications`, { headers: { authorization: `Bearer ${p.token}` } });
    expect(withPat.status).to.equal(403);
    expect(((await withPat.json()) as { error: { code: string } }).error.code).to.equal('pat-not-accepted');
    const anonymous = await new Browser(w.gw).get('api', '/v1/account/applications');
    expect(anonymous.status).to.equal(401);
    expect(anonymous.body.error.code).to.be.a('string').and.not.equal('');
    expect(anonymous.body.error.message).to.be.a('string').and.not.equal('');
  });
});
