/**
 * Research applications over a real redis-server: the strict body (every inner shape), the AUP version in
 * force (409 naming it), 202 with the id and status; operators list, approve (the scope with its tasks, and
 * for the business rung the rung itself and its screening) and refuse through the admin API and the CLI;
 * the principal sees each outcome in research status; an expired screening refuses red calls; an
 * operator's own grant of L3/L4 needs a screening reference, and a screened rung without one is refused.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { editFile } from '../helpers/gateway.js';
import { cli as runCli } from '../helpers/cli.js';
import { RedisStore } from '../../src/store/redis.js';
import { RedisBillingStore } from '../../src/billing/redis-store.js';

const VALID = {
  verificationMode: 'card',
  policyVersion: '2026-11',
  consent: { acceptableUse: true, localExecutionBoundary: true },
  authorizedResearch: { authorization: 'owned', targets: [{ kind: 'repository', identifier: 'github.com/acme/app' }] },
  purpose: 'triage the findings of our own fuzzing runs',
  scope: { id: 'acme-app', tasks: ['code-review', 'vulnerability-triage'] },
};

describe('research applications (redis, admin API and CLI)', function () {
  // A test runs five CLI processes, each loading TypeScript: 6 s on CI, 10 s on a loaded two-core machine.
  this.timeout(120_000);
  let w: World;
  const apply = async (token: string, body: unknown) => {
    const res = await fetch(`${w.gw.apiUrl}/v1/research/applications`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const status = async (token: string) =>
    (await (await fetch(`${w.gw.apiUrl}/v1/research/status`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;

  before(async () => {
    w = await startWorld();
  });
  after(() => w.stop());

  it('accepts a valid application (202), shows it pending, and an operator approval makes the scope visible', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const r = await apply(p.token, VALID);
    expect(r.status).to.equal(202);
    expect(r.body).to.deep.include({ status: 'submitted', verificationMode: 'card', scope: VALID.scope });
    expect(r.body.id).to.match(/^app_[0-9a-f-]{36}$/);
    expect((await status(p.token)).scopes).to.deep.include({
      id: 'acme-app',
      status: 'pending',
      tasks: ['code-review', 'vulnerability-triage'],
      applicationId: r.body.id,
    });

    const listed = await w.gw.admin('GET', '/applications?status=submitted');
    expect(listed.body.data.map((a: any) => a.id)).to.include(r.body.id);
    const approved = await w.gw.admin('POST', `/applications/${r.body.id}/approve`, { note: 'own repository' });
    expect(approved.status).to.equal(200);
    expect(approved.body).to.deep.include({ status: 'approved', decisionNote: 'own repository' });
    const s = await status(p.token);
    expect(s.scopes).to.deep.include({ id: 'acme-app', status: 'approved', tasks: ['code-review', 'vulnerability-triage'], applicationId: r.body.id });
    expect(s.scopes.find((x: any) => x.id === 'owned')).to.deep.include({ status: 'approved', tasks: ['code-review'] });
    // Approving again finishes what an interrupted approval left; refusing an approved one is 409.
    expect((await w.gw.admin('POST', `/applications/${r.body.id}/approve`, {})).status).to.equal(200);
    const refuse = await w.gw.admin('POST', `/applications/${r.body.id}/refuse`, { reason: 'changed my mind' });
    expect(refuse.status).to.equal(409);
    expect(refuse.body.error.code).to.equal('application-decided');
  });

  it('refuses a policyVersion that is not in force with 409 naming the current one, storing nothing', async () => {
    const p = await w.gw.principal();
    const r = await apply(p.token, { ...VALID, policyVersion: '2025-01' });
    expect(r.status).to.equal(409);
    expect(r.body.error.code).to.equal('policy-version-mismatch');
    expect(r.body.error.message).to.include('"2026-11"');
    expect((await status(p.token)).scopes).to.deep.equal([]);
  });

  it('refuses every broken inner shape with 400 naming the field', async () => {
    const p = await w.gw.principal();
    const broken: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...VALID, verificationMode: 'vibes' }, /verificationMode/],
      [{ ...VALID, consent: { acceptableUse: false, localExecutionBoundary: true } }, /consent\.acceptableUse/],
      [{ ...VALID, consent: { acceptableUse: true } }, /missing field "localExecutionBoundary"/],
      [{ ...VALID, authorizedResearch: { authorization: 'owned', targets: [] } }, /authorizedResearch\.targets/],
      [{ ...VALID, authorizedResearch: { authorization: 'owned', targets: [{ kind: 'moon', identifier: 'x' }] } }, /authorizedResearch\.targets\[0\]\.kind/],
      [{ ...VALID, authorizedResearch: { ...VALID.authorizedResearch, extra: 1 } }, /unknown field "extra"/],
      [{ ...VALID, purpose: 'short' }, /purpose/],
      [{ ...VALID, scope: { id: 'acme', tasks: ['cooking'] } }, /unknown task "cooking"/],
      [{ ...VALID, scope: { id: 'ACME', tasks: ['code-review'] } }, /scope\.id/],
      [{ ...VALID, note: 'hi' }, /unknown field "note"/],
    ];
    for (const [body, message] of broken) {
      const r = await apply(p.token, body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error.code).to.equal('invalid-request');
      expect(r.body.error.message).to.match(message);
    }
    const { verificationMode: _drop, ...missing } = VALID;
    expect((await apply(p.token, missing)).body.error.message).to.match(/missing field "verificationMode"/);
    expect((await status(p.token)).scopes).to.deep.equal([]);
  });

  it('shows a refusal and its reason in research status', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const r = await apply(p.token, { ...VALID, scope: { id: 'third-party', tasks: ['remediation'] } });
    const refused = await w.gw.admin('POST', `/applications/${r.body.id}/refuse`, { reason: 'no authorization on file' });
    expect(refused.body).to.deep.include({ status: 'refused', decisionNote: 'no authorization on file' });
    expect((await status(p.token)).scopes).to.deep.include({
      id: 'third-party',
      status: 'refused',
      tasks: ['remediation'],
      applicationId: r.body.id,
      note: 'no authorization on file',
    });
    expect((await w.gw.admin('POST', `/applications/${r.body.id}/approve`, {})).body.error.code).to.equal('application-decided');
    expect((await w.gw.admin('POST', '/applications/app_nope/approve', {})).status).to.equal(404);
    expect((await w.gw.admin('GET', '/applications/app_nope')).body.error.code).to.equal('application-not-found');
    expect((await w.gw.admin('GET', '/applications?status=maybe')).status).to.equal(400);
    expect((await w.gw.admin('POST', `/applications/${r.body.id}/refuse`, {})).body.error.code).to.equal('invalid-request');
  });

  it('grants the business rung only through an approved application, with a screening that expires', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const r = await apply(p.token, { ...VALID, verificationMode: 'business', scope: { id: 'acme-cyber', tasks: ['vulnerability-triage'] } });
    expect((await status(p.token)).trust.rung).to.equal('card');
    await w.gw.admin('POST', `/applications/${r.body.id}/approve`, {});
    const s = await status(p.token);
    expect(s.trust).to.deep.include({ rung: 'business', level: 'L3' });
    expect(s.trust.screening.status).to.equal('clear');
    expect((Date.parse(s.trust.screening.expiresAt) - Date.parse(s.trust.screening.checkedAt)) / 86_400_000).to.be.closeTo(30, 0.001);
    expect(s).to.deep.include({ status: 'eligible', reason: null });
    const body = { model: 'red-whitehacker-a', task: 'vulnerability-triage', max_tokens: 2048, messages: [{ role: 'user', content: 'triage' }] };
    expect((await w.gw.chat(p.token, body)).status).to.equal(200);

    // The screening expires: status and red calls say so. (Written straight into the store the gateway reads.)
    const raw = await RedisStore.connect({ url: w.redis.url });
    try {
      await new RedisBillingStore(raw).putCheck(p.id, 'screening', {
        state: 'verified',
        reason: null,
        evidenceRef: 'x',
        at: Date.now() + 1000,
        expiresAt: new Date(Date.now() - 1000).toISOString(),
      });
    } finally {
      await raw.close();
    }
    const expired = await status(p.token);
    expect(expired).to.deep.include({ status: 'pending', reason: 'screening-expired' });
    expect(expired.trust.screening.status).to.equal('expired');
    const refused = await w.gw.chat(p.token, { ...body, messages: [{ role: 'user', content: 'triage again' }] });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('screening-expired');
  });

  it('an operator grants L3/L4 only with a screening reference (admin API and CLI), recorded for 30 days; an unscreened rung refuses red calls', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const env = { PORTCULLIS_ADMIN_URL: w.gw.adminUrl, PORTCULLIS_ADMIN_TOKEN: w.gw.adminToken };
    // Without a reference: refused, nothing changed.
    const bare = await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/rung`, { rung: 'business' });
    expect(bare.status).to.equal(403);
    expect(bare.body.error.code).to.equal('screening-required');
    const cliBare = await runCli(['admin', 'principal', 'grant', p.id, '--rung', 'contracted'], env);
    expect(cliBare.code).to.not.equal(0);
    expect(cliBare.stderr).to.contain('screening-required');
    expect((await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/rung`, { rung: 'business', screeningReference: '' })).body.error.code).to.equal(
      'invalid-request',
    );
    expect((await status(p.token)).trust.rung).to.equal('card');
    expect((await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/verification`)).body.checks.screening).to.equal(undefined);

    // With one (the CLI): the rung, and the screening with its reference and 30-day expiry.
    const granted = await runCli(['admin', 'principal', 'grant', p.id, '--rung', 'business', '--screening', 'case-4711'], env);
    expect(granted.code, granted.stderr).to.equal(0);
    const s = await status(p.token);
    expect(s.trust).to.deep.include({ rung: 'business', level: 'L3' });
    expect(s.trust.screening.status).to.equal('clear');
    expect((Date.parse(s.trust.screening.expiresAt) - Date.parse(s.trust.screening.checkedAt)) / 86_400_000).to.be.closeTo(30, 0.001);
    const screening = (await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/verification`)).body.checks.screening;
    expect(screening).to.deep.include({ state: 'verified', evidenceRef: 'operator:case-4711' });
    const red = { model: 'red-whitehacker-a', task: 'code-review', max_tokens: 2048, messages: [{ role: 'user', content: 'review this' }] };
    expect((await w.gw.chat(p.token, red)).status).to.equal(200);
    // Below L3 no reference is needed.
    const q = await w.gw.principal();
    expect((await w.gw.admin('POST', `/principals/${encodeURIComponent(q.id)}/rung`, { rung: 'identity' })).status).to.equal(200);

    // A business rung held with no screening (granted before the rule): status and red calls say so.
    const u = await w.gw.principal({ rung: 'card' });
    const raw = await RedisStore.connect({ url: w.redis.url });
    try {
      const held = (await raw.getPrincipal(u.id))!.rung!;
      await raw.setRung(u.id, { ...held, id: 'business' }, null);
    } finally {
      await raw.close();
    }
    const unscreened = await status(u.token);
    expect(unscreened).to.deep.include({ status: 'pending', reason: 'screening-required' });
    expect(unscreened.trust.screening.status).to.equal('not-recorded');
    const refused = await w.gw.chat(u.token, { ...red, messages: [{ role: 'user', content: 'review that' }] });
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('screening-required');
  });

  it('lets an operator list, show, approve and refuse through the CLI', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const a = (await apply(p.token, { ...VALID, scope: { id: 'cli-a', tasks: ['code-review'] } })).body.id;
    const b = (await apply(p.token, { ...VALID, scope: { id: 'cli-b', tasks: ['code-review'] } })).body.id;
    const env = { PORTCULLIS_ADMIN_URL: w.gw.adminUrl, PORTCULLIS_ADMIN_TOKEN: w.gw.adminToken };
    const list = await runCli(['admin', 'applications', '--status', 'submitted'], env);
    expect(list.code).to.equal(0);
    const ids = list.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ids).to.include.members([a, b]);
    const show = await runCli(['admin', 'application', 'show', a], env);
    expect(JSON.parse(show.stdout).request.scope.id).to.equal('cli-a');
    const approve = await runCli(['admin', 'application', 'approve', a, '--note', 'fine'], env);
    expect(approve.stdout).to.equal(`approved ${a}: scope cli-a with code-review for ${p.id}\n`);
    const refuse = await runCli(['admin', 'application', 'refuse', b, '--reason', 'duplicate'], env);
    expect(refuse.stdout).to.equal(`refused ${b}\n`);
    const again = await runCli(['admin', 'application', 'refuse', a, '--reason', 'x'], env);
    expect(again.code).to.not.equal(0);
    expect(again.stderr).to.include('application-decided');
    const scopes = (await status(p.token)).scopes;
    expect(scopes).to.deep.include({ id: 'cli-a', status: 'approved', tasks: ['code-review'], applicationId: a });
    expect(scopes.find((s: any) => s.id === 'cli-b')).to.deep.include({ status: 'refused', note: 'duplicate' });
  });
});

describe('research applications renew consent to a new AUP version', () => {
  it('a verified principal asked for consent again after the AUP changed becomes eligible by applying under the new version', async () => {
    const w = await startWorld();
    try {
      const p = await w.gw.principal({ rung: 'card' });
      editFile(w.gw.root, 'rules/rungs.yaml', (t) => t.replace('version: "2026-11"', 'version: "2026-12"'));
      expect((await w.gw.admin('POST', '/reload')).status).to.equal(200);
      const st = async () => (await (await fetch(`${w.gw.apiUrl}/v1/research/status`, { headers: { authorization: `Bearer ${p.token}` } })).json()) as any;
      expect(await st()).to.deep.include({ status: 'pending', reason: 'aup-consent-required' });
      const post = (body: unknown) =>
        fetch(`${w.gw.apiUrl}/v1/research/applications`, {
          method: 'POST',
          headers: { authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const stale = await post(VALID);
      expect(stale.status).to.equal(409);
      expect(((await stale.json()) as any).error.message).to.include('"2026-12"');
      expect((await post({ ...VALID, policyVersion: '2026-12' })).status).to.equal(202);
      expect(await st()).to.deep.include({ status: 'eligible', reason: null });
      expect((await st()).trust.rung).to.equal('card');
    } finally {
      await w.stop();
    }
  });
});
