/**
 * The Guardrails contract as other stages use it: normalisation maps back to the original text, `redact`
 * returns a new request and never touches its input, findings name rule, detector and place but never the
 * text, rule ids come unique and sorted, and the Classifier seam takes an external classifier.
 */
import { expect } from 'chai';
import {
  compileGuardrails,
  lexicalClassifier,
  LexicalMatcher,
  lexicalWords,
  normalise,
  originalSpan,
  type ChatLike,
  type Classifier,
} from '../../src/guard/index.js';
import { guardrails, secretFindings, user } from './helpers/guardrails.js';
import { secretSamples } from './helpers/secrets.js';
import { loadGuardrailsDoc } from '../../src/guard/index.js';
import { RULES_DIR } from './helpers/guardrails.js';

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    Object.freeze(v);
    for (const x of Object.values(v)) deepFreeze(x);
  }
  return v;
}

describe('guard: normalisation', () => {
  it('leaves plain ASCII alone, without a map', () => {
    const n = normalise('plain text\twith tabs\n');
    expect(n.text).to.equal('plain text\twith tabs\n');
    expect(n.starts).to.equal(null);
  });

  it('folds fullwidth, styled, look-alike and accented letters, and drops invisible characters', () => {
    expect(normalise('ｓｋ－ｐｒｏｊ').text).to.equal('sk-proj');
    expect(normalise('𝐀𝐊𝐈𝐀').text).to.equal('AKIA');
    expect(normalise('АКІА ѕк').text).to.equal('AKIA sk');
    // Unicode's confusables data reads a Greek gamma as y.
    expect(normalise('Αβγ ΚΟΡ').text).to.equal('Aβy KOP');
    expect(normalise('s\u200bk\u00ad-\u2060p\ufeffr\u200do\u202ej').text).to.equal('sk-proj');
    expect(normalise('sk\u2010proj\u2212x').text).to.equal('sk-proj-x');
    expect(normalise('café naïve').text).to.equal('cafe naive');
    expect(normalise('a\u0000b\u007fc').text).to.equal('abc');
  });

  it('maps a normalised span back to the original span, invisible characters inside it included', () => {
    const original = 'key: ｓ\u200bｋ-x\u00ady!';
    const n = normalise(original);
    expect(n.text).to.equal('key: sk-xy!');
    const s = n.text.indexOf('sk');
    const [a, b] = originalSpan(n, s, s + 'sk-xy'.length);
    expect(original.slice(a, b)).to.equal('ｓ\u200bｋ-x\u00ady');
    const astral = normalise('x𝐬𝐤y');
    expect(originalSpan(astral, 1, 3)).to.deep.equal([1, 5]);
  });

  it('reads words as the lexical classifier does', () => {
    expect(lexicalWords(normalise('S4R1N, s a r i n, s.a.r.i.n, s@rin, weapons-grade, x86 1234').text)).to.deep.equal([
      'sarin',
      'sarin',
      'sarin',
      'sarin',
      'weapons',
      'grade',
      'x86',
      '1234',
    ]);
  });
});

describe('guard: the Guardrails contract', () => {
  const g = () => guardrails();
  const [openai, , , , , aws] = secretSamples();

  const request = () =>
    ({
      model: 'shared-general-a',
      max_tokens: 4096,
      stream: false,
      messages: [
        { role: 'system', content: 'You review code.' },
        user(`deploy with ${openai!.value} please, and tell me about passkeys`),
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'env', arguments: JSON.stringify({ AWS_ACCESS_KEY_ID: aws!.value }) } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
      tools: [{ type: 'function', function: { name: 'env', parameters: { type: 'object' } } }],
    }) satisfies ChatLike & Record<string, unknown>;

  it('redact returns a new request and never mutates its input', () => {
    const req = deepFreeze(request());
    const before = JSON.stringify(req);
    const { request: out, masked } = g().redact(req);
    expect(JSON.stringify(req)).to.equal(before);
    expect(masked).to.equal(2);
    expect(out).not.to.equal(req);
    expect(out.messages).not.to.equal(req.messages);
    out.messages.forEach((m, i) => expect(m).not.to.equal(req.messages[i]));
    expect(out.tools).not.to.equal(req.tools);
    expect(out.tools[0]).not.to.equal(req.tools[0]);
    expect({ model: out.model, max_tokens: out.max_tokens, stream: out.stream }).to.deep.equal({ model: 'shared-general-a', max_tokens: 4096, stream: false });
    expect(out.messages[1]!.content).to.equal('deploy with [REDACTED:openai-key] please, and tell me about passkeys');
    expect(JSON.parse(out.messages[2]!.tool_calls![0]!.function.arguments)).to.deep.equal({ AWS_ACCESS_KEY_ID: '[REDACTED:aws-access-key-id]' });
  });

  it('an untouched request comes back equal, as a copy', () => {
    const req = deepFreeze({ messages: [user('hello')], tools: [{ type: 'function', function: { name: 'f' } }] });
    const { request: out, masked } = g().redact(req);
    expect(masked).to.equal(0);
    expect(out).to.deep.equal(req);
    expect(out.messages[0]).not.to.equal(req.messages[0]);
  });

  it('findings name rule, action, detector and place - never the text', () => {
    const scan = g().scan(request());
    expect(scan.findings).to.deep.equal([
      { rule: 'pii-passkeys', action: 'flag', detector: 'key-references', where: 'messages[1].content' },
      { rule: 'secret-hygiene', action: 'redact', detector: 'credential-shapes:openai-key', where: 'messages[1].content' },
      { rule: 'secret-hygiene', action: 'redact', detector: 'credential-shapes:aws-access-key-id', where: 'messages[2].tool_calls[0].function.arguments' },
    ]);
    expect(scan.ruleIds).to.deep.equal(['pii-passkeys', 'secret-hygiene']);
    const serialised = JSON.stringify(scan);
    expect(serialised).not.to.include(openai!.value.slice(0, 10));
    expect(serialised).not.to.include(aws!.value);
  });

  it('flags a private key block as well as masking it', () => {
    const pem = secretSamples().find((s) => s.name === 'pem ec')!;
    const scan = g().scan({ messages: [user(Buffer.from(pem.value).toString('base64'))] });
    expect(scan.ruleIds).to.deep.equal(['pii-passkeys', 'secret-hygiene']);
    expect(scan.findings.map((f) => [f.rule, f.detector, f.via])).to.deep.equal([
      ['pii-passkeys', 'key-material:private-key', 'base64'],
      ['secret-hygiene', 'credential-shapes:private-key', 'base64'],
    ]);
  });

  it('keeps the Classifier seam: an external classifier adds its findings through classify()', async () => {
    const seen: string[] = [];
    const moderation: Classifier = {
      id: 'moderation-endpoint',
      classify: async (texts) => {
        seen.push(...texts.map((t) => t.where));
        return texts.some((t) => t.text.includes('forbidden'))
          ? [{ rule: 'fraud-block', action: 'block', detector: 'moderation-endpoint', where: 'messages[0].content' }]
          : [];
      },
    };
    const withExternal = compileGuardrails(loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`), { classifiers: [moderation] });
    const result = await withExternal.classify({ messages: [user('something forbidden'), user('fine')] });
    expect(seen).to.deep.equal(['messages[0].content', 'messages[1].content']);
    expect(result.ruleIds).to.deep.equal(['fraud-block']);
    expect(withExternal.scan({ messages: [user('something forbidden')] }).ruleIds).to.deep.equal([]);
  });

  it('offers the built-in lexical classifier behind the same interface', async () => {
    const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
    const specs = doc.rules.flatMap((r) =>
      r.detectors.flatMap((d) => (d.kind === 'lexical' ? [{ rule: r.id, action: r.action, id: d.id, any: d.any ?? [], near: d.near ?? [] }] : [])),
    );
    const lexical: Classifier = lexicalClassifier(new LexicalMatcher(specs));
    const findings = await lexical.classify([{ where: 'messages[0].content', text: 'Where should the app keep its s1gning k3y?' }]);
    expect(findings.map((f) => f.rule)).to.deep.equal(['pii-passkeys']);
  });

  it('masks a secret in output text and leaves everything else as it was', () => {
    const text = `line one\n${aws!.value}\nline three`;
    expect(g().maskOutput(text)).to.deep.equal({ text: 'line one\n[REDACTED:aws-access-key-id]\nline three', masked: 1 });
    expect(g().maskOutput('{"not": "a secret", "n": 1}')).to.deep.equal({ text: '{"not": "a secret", "n": 1}', masked: 0 });
    expect(secretFindings(g().scan({ messages: [user(g().maskOutput(text).text)] }))).to.deep.equal([]);
  });
});
