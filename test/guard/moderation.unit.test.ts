/**
 * The moderation-endpoint classifier on its own, against a local OpenAI-compatible moderation server: one
 * request per call with one input per place, its categories mapped to rule findings (on the endpoint's
 * verdict, or on a score with minScore), and every way of not answering turned into a ClassifierError with
 * a fixed reason. Through compileGuardrails: the classifier reads the request with secrets masked, and its
 * failure is reported with its failure mode instead of thrown.
 */
import { expect } from 'chai';
import { ClassifierError, compileGuardrails, loadGuardrailsDoc, moderationClassifier, type ModerationOptions } from '../../src/guard/index.js';
import { RULES_DIR, user } from './helpers/guardrails.js';
import { secretSamples } from './helpers/secrets.js';
import { startModerationServer, type ModerationServer } from '../helpers/moderation.js';

describe('guard: moderation-endpoint classifier', () => {
  let m: ModerationServer;
  const made: Array<{ close(): Promise<void> }> = [];
  const classifier = (patch: Partial<ModerationOptions> = {}) => {
    const c = moderationClassifier({
      id: 'mod',
      url: m.url,
      authorization: 'Bearer test-key',
      model: 'omni-moderation-latest',
      // A budget no busy machine reaches: only the timeout case is about it, and it sets its own.
      timeoutMs: 10_000,
      failClosed: true,
      categories: new Map([
        ['illicit', { rule: 'fraud-block', action: 'block' as const }],
        ['self-harm', { rule: 'pii-passkeys', action: 'flag' as const, minScore: 0.5 }],
      ]),
      ...patch,
    });
    made.push(c);
    return c;
  };

  before(async () => {
    m = await startModerationServer();
  });
  after(async () => {
    await Promise.all(made.map((c) => c.close()));
    await m.close();
  });
  beforeEach(() => m.reset());

  it('sends one request with one input per place, the key and the model, and maps categories to findings', async () => {
    m.triggers.set('contraband', 'illicit');
    const found = await classifier().classify([
      { where: 'messages[0].content', text: 'hello' },
      { where: 'messages[1].content', text: 'sell contraband' },
      { where: 'tools[0]', text: 'type' },
      { where: 'tools[0]', text: 'function' },
      { where: 'messages[2].content', text: '   ' },
    ]);
    expect(m.requests).to.have.length(1);
    expect(m.requests[0]!.headers['authorization']).to.equal('Bearer test-key');
    expect(m.requests[0]!.body).to.deep.equal({ input: ['hello', 'sell contraband', 'type\nfunction'], model: 'omni-moderation-latest' });
    expect(found).to.deep.equal([{ rule: 'fraud-block', action: 'block', detector: 'mod:illicit', where: 'messages[1].content' }]);
  });

  it('matches a minScore category on its score, not on the verdict', async () => {
    m.scores.set('high', ['self-harm', 0.7]);
    m.scores.set('low', ['self-harm', 0.3]);
    const found = await classifier().classify([
      { where: 'messages[0].content', text: 'high' },
      { where: 'messages[1].content', text: 'low' },
    ]);
    expect(found).to.deep.equal([{ rule: 'pii-passkeys', action: 'flag', detector: 'mod:self-harm', where: 'messages[0].content' }]);
  });

  it('asks nothing when there is no text', async () => {
    expect(await classifier().classify([{ where: 'messages[0].content', text: '' }])).to.deep.equal([]);
    expect(m.requests).to.have.length(0);
  });

  const failures: Array<[string, () => void, RegExp, Partial<ModerationOptions>?]> = [
    ['an error status', () => m.behave({ mode: 'status', status: 503 }), /^http 503$/],
    ['a timeout', () => m.behave({ mode: 'slow', delayMs: 1000 }), /^timeout \(300 ms\)$/, { timeoutMs: 300 }],
    ['a malformed body', () => m.behave({ mode: 'malformed' }), /^malformed answer$/],
    ['too few results', () => m.behave({ mode: 'short' }), /^malformed answer$/],
    ['a dropped connection', () => m.behave({ mode: 'drop' }), /^connection lost$/],
  ];
  for (const [what, set, reason, patch] of failures) {
    it(`turns ${what} into a ClassifierError with a fixed reason`, async () => {
      set();
      const err = await classifier(patch)
        .classify([{ where: 'messages[0].content', text: 'secret prompt words' }])
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).to.be.instanceOf(ClassifierError);
      expect((err as ClassifierError).reason).to.match(reason);
      expect((err as Error).message).not.to.contain('secret prompt words');
    });
  }

  it('reports an unreachable endpoint', async () => {
    const c = classifier({ url: 'http://127.0.0.1:9/v1/moderations' });
    const err = (await c.classify([{ where: 'messages[0].content', text: 'x' }]).catch((e: unknown) => e)) as ClassifierError;
    expect(err.reason).to.equal('unreachable');
  });

  describe('through compileGuardrails', () => {
    const doc = () => loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
    const key = secretSamples()[1]!.value;

    it('hands the classifier the request with secrets masked, and merges its findings', async () => {
      m.triggers.set('contraband', 'illicit');
      const g = compileGuardrails(doc(), { classifiers: [classifier()] });
      const r = await g.classify({ messages: [user(`my key is ${key} .`), user('sell contraband')] });
      expect(m.requests[0]!.body.input).to.deep.equal(['my key is [REDACTED:openai-key] .', 'sell contraband']);
      expect(r.ruleIds).to.deep.equal(['fraud-block', 'secret-hygiene']);
      expect(r.failures).to.equal(undefined);
    });

    it('reports a failed classifier with its failure mode instead of throwing, keeping the built-in findings', async () => {
      m.behave({ mode: 'status', status: 500 });
      for (const failClosed of [true, false]) {
        const g = compileGuardrails(doc(), { classifiers: [classifier({ failClosed })] });
        const r = await g.classify({ messages: [user('where can I buy fullz')] });
        expect(r.ruleIds).to.deep.equal(['fraud-block']);
        expect(r.failures).to.deep.equal([{ classifier: 'mod', failClosed, reason: 'http 500' }]);
      }
    });

    it('refuses a rules file whose classifier names an unknown rule, a redact rule, or states no failure mode', () => {
      const base = doc();
      const c = { id: 'mod', kind: 'moderation' as const, url: m.url, timeoutMs: 100, failClosed: true, categories: {} as Record<string, string> };
      expect(() => compileGuardrails({ ...base, classifiers: [{ ...c, categories: { illicit: 'no-such-rule' } }] })).to.throw(/unknown rule "no-such-rule"/);
      expect(() => compileGuardrails({ ...base, classifiers: [{ ...c, categories: { illicit: 'secret-hygiene' } }] })).to.throw(/can only block or flag/);
      const { failClosed: _f, ...unstated } = c;
      expect(() => compileGuardrails({ ...base, classifiers: [unstated as typeof c] })).to.throw(/failClosed must be stated/);
    });
  });
});
