/**
 * An external moderation endpoint configured in rules/guardrails.yaml, end to end: a local
 * OpenAI-compatible moderation server started here, two gateways (one whose classifier fails closed, one
 * whose classifier fails open) and the recording upstream. Its categories become findings of the rules they
 * map to and are decided by the policy like any other; it never sees a live secret; when it cannot answer,
 * failing closed refuses the call (503 guardrail-classifier-unavailable, a receipt, nothing forwarded) and
 * failing open admits it and logs why. The rules file is strict about it: the failure mode is required.
 */
import { expect } from 'chai';
import { loadConfig } from '../../src/config/load.js';
import { compileRuntime } from '../../src/config/compile.js';
import { ConfigError } from '../../src/config/documents.js';
import type { Logger } from '../../src/log.js';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startModerationServer, type ModerationServer } from '../helpers/moderation.js';
import { secretSamples } from '../guard/helpers/secrets.js';

const KEY_ENV = 'TEST_MODERATION_KEY';
/**
 * The classifier's budget: the moderation server and the gateways run in this process, and a busy machine
 * that stalled it past a few hundred milliseconds would turn a call the endpoint answered into a refusal
 * (fail closed) or an admission without its findings (fail open). The timeout cases answer twice as late.
 */
const TIMEOUT_MS = 2000;

function classifierYaml(url: string, failClosed: boolean | null, extra = ''): string {
  return `
classifiers:
  - id: local-moderation
    kind: moderation
    description: A moderation endpoint run by the test.
    url: ${url}
    apiKeyEnv: ${KEY_ENV}
    model: omni-moderation-latest
    timeoutMs: ${TIMEOUT_MS}
${failClosed === null ? '' : `    failClosed: ${failClosed}\n`}    categories:
      illicit: fraud-block
      self-harm: { rule: pii-passkeys, minScore: 0.5 }
${extra}`;
}

function rootWith(yaml: string): string {
  const root = configRoot();
  editFile(root, 'rules/guardrails.yaml', (t) => t + yaml);
  return root;
}

function capturingLogger(lines: Array<Record<string, unknown>>): Logger {
  const at = (level: string) => (event: string, fields?: Record<string, unknown>) => void lines.push({ level, event, ...fields });
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('external classifier: a moderation endpoint (local moderation server, recording upstream)', function () {
  this.timeout(60_000);
  let m: ModerationServer;
  let up: RecordingUpstream;
  let closed: TestGateway;
  let open: TestGateway;
  const openLog: Array<Record<string, unknown>> = [];
  const env = { [KEY_ENV]: 'moderation-test-key' };

  before(async () => {
    [m, up] = await Promise.all([startModerationServer(), startRecordingUpstream()]);
    closed = await startTestGateway({ upstreamUrl: up.baseUrl, root: rootWith(classifierYaml(m.url, true)), env });
    open = await startTestGateway({ upstreamUrl: up.baseUrl, root: rootWith(classifierYaml(m.url, false)), env, log: capturingLogger(openLog) });
  });
  after(async () => {
    await Promise.all([closed?.close(), open?.close()]);
    await Promise.all([up?.stop(), m?.close()]);
  });
  beforeEach(async () => {
    m.reset();
    await up.reset();
  });

  let n = 0;
  const ask = async (gw: TestGateway, content: string, extra: Record<string, unknown> = {}) => {
    const p = await gw.principal();
    // A counter keeps every request distinct, so no call re-attaches to an earlier identical job.
    const res = await gw.chat(p.token, {
      model: 'shared-general-a',
      max_tokens: 2048,
      messages: [{ role: 'user', content: `${content} (#${n++})` }],
      ...extra,
    });
    const receipts = (await gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/receipts`)).body.data as Array<Record<string, any>>;
    return { res, receipt: receipts[0], principal: p };
  };

  it('asks the endpoint once per call with the key from the environment, and never with a live secret', async () => {
    const secret = secretSamples()[1]!.value;
    const { res } = await ask(closed, `Is this config fine? OPENAI_API_KEY=${secret} .`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(m.requests).to.have.length(1);
    expect(m.requests[0]!.headers['authorization']).to.equal('Bearer moderation-test-key');
    expect(m.requests[0]!.body.model).to.equal('omni-moderation-latest');
    expect(JSON.stringify(m.requests[0]!.body)).not.to.contain(secret);
    expect(m.requests[0]!.body.input[0]).to.match(/^Is this config fine\? OPENAI_API_KEY=\[REDACTED:openai-key\] \. \(#\d+\)$/);
  });

  it('refuses a call whose category maps to a block rule: 403 guardrail-blocked, nothing forwarded, the rule on the receipt', async () => {
    m.triggers.set('contraband', 'illicit');
    const { res, receipt } = await ask(closed, 'help me sell the contraband');
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal('guardrail-blocked');
    expect(await up.requests()).to.have.length(0);
    expect(receipt!.guardrails.block).to.deep.equal(['fraud-block']);
    expect(receipt).to.include({ outcome: 'refused' });
  });

  it('flags a call on a category score at or above minScore, and puts it on the review list', async () => {
    m.scores.set('rough week', ['self-harm', 0.6]);
    const { res, receipt, principal } = await ask(closed, 'I had a rough week, review my code anyway');
    expect(res.status).to.equal(200);
    expect(receipt!.guardrails).to.deep.equal({ block: [], redact: [], flag: ['pii-passkeys'] });
    const reviews = (await closed.admin('GET', '/reviews')).body.data as Array<Record<string, any>>;
    const entry = reviews.find((e) => e.principalId === principal.id)!;
    expect(entry.findings).to.deep.equal([{ rule: 'pii-passkeys', detector: 'local-moderation:self-harm', where: 'messages[0].content' }]);

    m.scores.set('calm week', ['self-harm', 0.2]);
    const calm = await ask(closed, 'A calm week, review my code');
    expect(calm.receipt!.guardrails.flag).to.deep.equal([]);
  });

  const failures: Array<[string, () => void, string]> = [
    ['answers 500', () => m.behave({ mode: 'status', status: 500 }), 'http 500'],
    ['times out', () => m.behave({ mode: 'slow', delayMs: 2 * TIMEOUT_MS }), `timeout (${TIMEOUT_MS} ms)`],
    ['answers a malformed body', () => m.behave({ mode: 'malformed' }), 'malformed answer'],
    ['drops the connection', () => m.behave({ mode: 'drop' }), 'connection lost'],
  ];

  for (const [what, set] of failures) {
    it(`fails closed when the endpoint ${what}: 503 guardrail-classifier-unavailable, nothing forwarded, a receipt, nothing spent`, async () => {
      set();
      const { res, receipt } = await ask(closed, 'an ordinary code review request');
      expect(res.status).to.equal(503);
      expect(res.body.error.code).to.equal('guardrail-classifier-unavailable');
      expect(res.body.error.message).not.to.contain('ordinary');
      expect(await up.requests()).to.have.length(0);
      expect(receipt).to.include({ outcome: 'refused', chargedMicroUSD: 0 });
      expect(receipt!.error).to.deep.equal({ code: 'guardrail-classifier-unavailable' });
    });
  }

  for (const [what, set, reason] of failures) {
    it(`fails open when the endpoint ${what}: admitted, forwarded, and the failure logged`, async () => {
      set();
      openLog.length = 0;
      const { res, receipt } = await ask(open, 'another ordinary code review request');
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await up.requests()).to.have.length(1);
      expect(receipt!.outcome).to.equal('answered');
      const line = openLog.find((l) => l['event'] === 'guardrail.classifier.failed');
      expect(line).to.deep.include({ level: 'warn', classifier: 'local-moderation', reason, mode: 'fail-open', callId: receipt!.callId });
      expect(JSON.stringify(openLog)).not.to.contain('ordinary');
    });
  }

  it('keeps the admission order: a team refusal or a block finding answers before a classifier that is down', async () => {
    m.behave({ mode: 'status', status: 500 });
    const red = await ask(closed, 'triage this', { model: 'red-whitehacker-a' });
    expect(red.res.body.error.code).to.equal('verification-required');
    const blocked = await ask(closed, 'where can I buy fullz');
    expect(blocked.res.body.error.code).to.equal('guardrail-blocked');
  });

  it('is served by GET /v1/secure with its failure mode and categories, but not its URL or key variable', async () => {
    const body = (await (await fetch(`${closed.apiUrl}/v1/secure`)).json()) as { guardrails: { classifiers: Array<Record<string, unknown>> } };
    expect(body.guardrails.classifiers).to.deep.equal([
      {
        id: 'local-moderation',
        kind: 'moderation',
        description: 'A moderation endpoint run by the test.',
        model: 'omni-moderation-latest',
        timeoutMs: TIMEOUT_MS,
        failClosed: true,
        categories: { illicit: 'fraud-block', 'self-harm': { rule: 'pii-passkeys', minScore: 0.5 } },
      },
    ]);
  });

  describe('the rules file is strict', () => {
    const problems = async (root: string, e: Record<string, string> = env): Promise<string[]> => {
      try {
        const runtime = await compileRuntime(loadConfig(root, e), { env: e, demoBaseUrl: 'http://127.0.0.1:9/v1' });
        await runtime.close();
        return [];
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
    };

    it('accepts the configured classifier', async () => {
      expect(await problems(rootWith(classifierYaml(m.url, true)))).to.deep.equal([]);
    });

    it('requires the failure mode: no default', async () => {
      expect(await problems(rootWith(classifierYaml(m.url, null)))).to.deep.equal([
        "rules/guardrails.yaml: /classifiers/0 must have required property 'failClosed'",
      ]);
    });

    it('refuses unknown keys, an unknown kind and a bad score', async () => {
      expect((await problems(rootWith(classifierYaml(m.url, true, '    retries: 3\n')))).join('\n')).to.contain('has unknown key "retries"');
      expect((await problems(rootWith(classifierYaml(m.url, true).replace('kind: moderation', 'kind: guard-model')))).join('\n')).to.contain('/classifiers/0');
      expect((await problems(rootWith(classifierYaml(m.url, true).replace('minScore: 0.5', 'minScore: 5')))).join('\n')).to.contain(
        '/classifiers/0/categories',
      );
    });

    it('refuses a category that names an unknown rule or a redact rule', async () => {
      expect(await problems(rootWith(classifierYaml(m.url, true).replace('illicit: fraud-block', 'illicit: no-such-rule')))).to.deep.equal([
        'rules/guardrails.yaml: classifier local-moderation: category "illicit" names unknown rule "no-such-rule"',
      ]);
      expect((await problems(rootWith(classifierYaml(m.url, true).replace('illicit: fraud-block', 'illicit: secret-hygiene')))).join('\n')).to.contain(
        'can only block or flag',
      );
    });

    it('refuses a key variable that is not set', async () => {
      expect(await problems(rootWith(classifierYaml(m.url, true)), {})).to.deep.equal([
        `rules/guardrails.yaml: /classifiers/0/apiKeyEnv names ${KEY_ENV}, which is not set in the environment`,
      ]);
    });
  });
});
