/**
 * Operator redaction patterns in rules/guardrails.yaml, end to end: a gateway whose rules file adds a rule of
 * named RE2 patterns, and the recording upstream. What a pattern matches reaches the model as the pattern's
 * mask, exactly over the match; where the built-in secret rule and the operator's rule both match, both
 * markers show, as the receipt names both rules. A pattern RE2 cannot run in linear time, one that misses its
 * own test string, or one that matches the empty string is refused at load with the file and the JSON path,
 * and a reload that brings one in is refused while the configuration serving keeps serving.
 */
import { expect } from 'chai';
import { loadConfig } from '../../src/config/load.js';
import { compileRuntime } from '../../src/config/compile.js';
import { ConfigError } from '../../src/config/documents.js';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { STRIPE } from '../guard/helpers/shapes.js';

// The rules file holds five rules: the operator's comes sixth (index 5).
const RULE = 5;

function operatorRule(patterns: string): string {
  return `
  - id: operator-redactions
    action: redact
    description: Identifiers of our own that must not reach a model.
    detectors:
      - id: internal
        kind: patterns
        description: Internal token and ticket formats.
        patterns:
${patterns}`;
}

const TICKET = `          - name: acme-ticket-token
            pattern: 'ACME-TKN-[0-9A-F]{24}'
            mask: "[REDACTED:{kind}]"
            test: "see ACME-TKN-0123456789ABCDEF01234567 for access"
`;
// Matches the tail of a live Stripe key too: where both rules match, both masks must show.
const LIVE_SUFFIX = `          - name: live-marker
            pattern: '_live_[A-Za-z0-9]{8}'
            mask: "[LIVE:{kind}]"
            test: "sk_live_abcdEFGH"
`;

function rootWith(patterns: string): string {
  const root = configRoot();
  editFile(root, 'rules/guardrails.yaml', (t) => t.replace(/\n# External classifiers/, `${operatorRule(patterns)}\n# External classifiers`));
  return root;
}

async function problems(root: string): Promise<string[]> {
  try {
    const runtime = await compileRuntime(loadConfig(root, {}), { env: {}, demoBaseUrl: 'http://127.0.0.1:9/v1' });
    await runtime.close();
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('operator redaction patterns (rules/guardrails.yaml, recording upstream)', function () {
  this.timeout(60_000);
  let up: RecordingUpstream;
  let gw: TestGateway;

  before(async () => {
    up = await startRecordingUpstream();
    gw = await startTestGateway({ upstreamUrl: up.baseUrl, root: rootWith(TICKET + LIVE_SUFFIX) });
  });
  after(async () => {
    await gw?.close();
    await up?.stop();
  });
  beforeEach(() => up.reset());

  let n = 0;
  const send = async (content: string) => {
    const p = await gw.principal();
    const res = await gw.chat(p.token, { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: `${content} (#${n++})` }] });
    expect(res.status).to.equal(200);
    const [req] = await up.requests();
    const receipts = (await gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/receipts`)).body.data as Array<Record<string, any>>;
    return { seen: (req!.body.messages as Array<{ content: string }>)[0]!.content.replace(/ \(#\d+\)$/, ''), receipt: receipts[0]! };
  };

  it("masks exactly what the operator's pattern matches, with its mask, and names the rule on the receipt", async () => {
    const { seen, receipt } = await send('open ACME-TKN-00FF00FF00FF00FF00FF00FF. Then close the ticket');
    expect(seen).to.equal('open [REDACTED:acme-ticket-token]. Then close the ticket');
    expect(receipt.guardrails.redact).to.deep.equal(['operator-redactions']);
  });

  it('masks a built-in secret exactly: the prose after it reaches the model', async () => {
    const { seen } = await send(`use ${STRIPE.slice(0, 32).replace('_live_', '_test_')} and then deploy`);
    expect(seen).to.equal('use [REDACTED:stripe-key] and then deploy');
  });

  it("shows the second rule's mask where the first also matched, as the receipt names both", async () => {
    const { seen, receipt } = await send(`use ${STRIPE} and then deploy`);
    expect(seen).to.equal('use [REDACTED:stripe-key][LIVE:live-marker] and then deploy');
    expect(receipt.guardrails.redact).to.deep.equal(['operator-redactions', 'secret-hygiene']);
  });

  it('refuses a reload that brings in a pattern RE2 cannot run in linear time, and keeps serving the old rules', async () => {
    editFile(gw.root, 'rules/guardrails.yaml', (t) => t.replace("pattern: 'ACME-TKN-[0-9A-F]{24}'", "pattern: '(ACME-TKN-)\\1[0-9A-F]{24}'"));
    const bad = await gw.admin('POST', '/reload');
    expect(bad.status).to.equal(422);
    expect(bad.body.error.code).to.equal('config-invalid');
    expect(bad.body.error.message).to.contain(
      `rules/guardrails.yaml: /rules/${RULE}/detectors/0/patterns/0/pattern: pattern "acme-ticket-token" is refused: RE2 cannot compile it`,
    );
    const { seen } = await send('open ACME-TKN-00FF00FF00FF00FF00FF00FF now');
    expect(seen).to.equal('open [REDACTED:acme-ticket-token] now');
  });

  describe('the rules file is strict', () => {
    const at = (i: number, field: string) => `rules/guardrails.yaml: /rules/${RULE}/detectors/0/patterns/${i}/${field}`;

    it('accepts linear-time patterns that match their test strings', async () => {
      expect(await problems(rootWith(TICKET + LIVE_SUFFIX))).to.deep.equal([]);
    });

    for (const [what, pattern] of [
      ['a backreference', '(a+)\\1'],
      ['a lookahead', 'ACME(?=-TKN)'],
      ['a negative lookbehind', '(?<!x)ACME'],
      ['a possessive quantifier', 'ACME-[0-9]++'],
    ] as const) {
      it(`refuses ${what} with the file and the path`, async () => {
        const out = await problems(rootWith(TICKET.replace("'ACME-TKN-[0-9A-F]{24}'", `'${pattern}'`)));
        expect(out).to.have.length(1);
        expect(out[0]).to.contain(`${at(0, 'pattern')}: pattern "acme-ticket-token" is refused: RE2 cannot compile it`);
      });
    }

    it('refuses a pattern that does not match its own test string', async () => {
      expect(await problems(rootWith(TICKET.replace('{24}', '{25}')))).to.deep.equal([
        `${at(0, 'test')}: pattern "acme-ticket-token" does not match its test string`,
      ]);
    });

    it('refuses a pattern that matches the empty string', async () => {
      expect(await problems(rootWith(LIVE_SUFFIX + TICKET.replace("'ACME-TKN-[0-9A-F]{24}'", "'(ACME-TKN-[0-9A-F]{24})?'")))).to.deep.equal([
        `${at(1, 'pattern')}: pattern "acme-ticket-token" matches the empty string`,
      ]);
    });

    it('refuses a pattern without a test string or a mask, by the schema', async () => {
      const out = (await problems(rootWith(TICKET.replace(/ {12}test: .*\n/, '')))).join('\n');
      expect(out).to.contain(`/rules/${RULE}/detectors/0`);
      expect(out).to.contain('test');
    });
  });
});
