/**
 * secret-hygiene against a corpus of secrets and evasions: every secret kind, plainly written, hidden
 * behind invisible or look-alike characters, encoded, and split at every position across two messages or
 * a message and a tool result. Each must be masked completely: the masked text is exactly the surrounding
 * text plus the marker, the secret no longer appears anywhere, and scanning the masked request again finds
 * nothing for secret-hygiene.
 */
import { expect } from 'chai';
import type { ChatLike } from '../../src/guard/index.js';
import { ENCODINGS, EVASIONS, secretSamples, type SecretSample } from './helpers/secrets.js';
import { guardrails, secretFindings, texts, user } from './helpers/guardrails.js';

const BEFORE = 'config value: ';
const AFTER = ' (rotate it after the demo)';
const mask = (s: SecretSample) => `[REDACTED:${s.kind}]`;

function expectMasked(req: ChatLike, redacted: ChatLike, secret: string): void {
  for (const t of texts(redacted)) expect(t.includes(secret), 'secret survived').to.equal(false);
  expect(secretFindings(guardrails().scan(redacted)), 'rescan found a secret').to.deep.equal([]);
  expect(JSON.stringify(guardrails().scan(req).findings)).not.to.include(secret.slice(0, 12));
}

describe('guard: secret corpus', () => {
  const samples = secretSamples();
  const g = () => guardrails();

  it('has every secret kind and AWS prefix in the corpus', () => {
    expect(new Set(samples.map((s) => s.kind))).to.deep.equal(new Set(['openai-key', 'aws-access-key-id', 'private-key']));
    expect(samples.filter((s) => s.kind === 'aws-access-key-id')).to.have.length(12);
  });

  describe('written plainly', () => {
    for (const s of samples) {
      it(`masks ${s.name}`, () => {
        const req = { messages: [user(BEFORE + s.value + AFTER)] };
        const { request, masked } = g().redact(req);
        expect(request.messages[0]!.content).to.equal(BEFORE + mask(s) + AFTER);
        expect(masked).to.equal(1);
        expectMasked(req, request, s.value);
        const findings = g()
          .scan(req)
          .findings.filter((f) => f.rule === 'secret-hygiene');
        expect(findings).to.deep.equal([{ rule: 'secret-hygiene', action: 'redact', detector: `credential-shapes:${s.kind}`, where: 'messages[0].content' }]);
      });
    }
  });

  describe('evasions', () => {
    for (const [evasion, transform] of Object.entries(EVASIONS)) {
      // An evasion that leaves a secret unchanged (no dashes to swap, no letters with a look-alike) is no test.
      for (const s of samples.filter((x) => transform(x.value) !== x.value)) {
        it(`masks ${s.name} written with ${evasion}`, () => {
          const evaded = transform(s.value);
          const req = { messages: [user(BEFORE + evaded + AFTER)] };
          const { request } = g().redact(req);
          expect(request.messages[0]!.content).to.equal(BEFORE + mask(s) + AFTER);
          expectMasked(req, request, evaded);
        });
      }
    }
  });

  describe('encodings', () => {
    for (const [encoding, encode] of Object.entries(ENCODINGS)) {
      for (const s of samples) {
        it(`masks ${s.name} as ${encoding}`, () => {
          const encoded = encode(s.value);
          const req = { messages: [user(BEFORE + encoded + AFTER)] };
          const { request } = g().redact(req);
          expect(request.messages[0]!.content).to.equal(BEFORE + mask(s) + AFTER);
          expectMasked(req, request, encoded);
        });
      }
    }
  });

  describe('split at every position', () => {
    for (const s of samples) {
      it(`masks both halves of ${s.name} across two messages and across a message and a tool result`, () => {
        for (let k = 1; k < s.value.length; k++) {
          const head = s.value.slice(0, k);
          const tail = s.value.slice(k);
          const twoMessages: ChatLike = { messages: [user(BEFORE + head), user(tail + AFTER)] };
          const viaTool: ChatLike = {
            messages: [
              user(BEFORE + head),
              {
                role: 'assistant',
                content: null,
                tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_env', arguments: '{"file":".env"}' } }],
              },
              { role: 'tool', tool_call_id: 'call_1', content: tail + AFTER },
            ],
          };
          for (const req of [twoMessages, viaTool]) {
            const { request } = g().redact(req);
            const first = request.messages[0]!.content;
            const last = request.messages[request.messages.length - 1]!.content;
            if (first !== BEFORE + mask(s) || last !== mask(s) + AFTER) {
              expect.fail(`split at ${k} of ${s.value.length}: got ${JSON.stringify([first?.slice(-40), last?.slice(0, 40)])}`);
            }
            expect(secretFindings(g().scan(request)), `rescan after split at ${k}`).to.deep.equal([]);
          }
        }
      });
    }

    it('reports a split secret in both texts, marked as split', () => {
      const s = samples[1]!;
      const req = { messages: [user(BEFORE + s.value.slice(0, 30)), user(s.value.slice(30) + AFTER)] };
      const found = secretFindings(g().scan(req)).filter((f) => f.via === 'split');
      expect(found.map((f) => f.where)).to.deep.equal(['messages[0].content', 'messages[1].content']);
    });

    it('masks an encoded secret split across two messages', () => {
      for (const s of samples) {
        const encoded = Buffer.from(s.value).toString('base64');
        const k = Math.floor(encoded.length / 2);
        const req = { messages: [user(BEFORE + encoded.slice(0, k)), user(encoded.slice(k) + AFTER)] };
        const { request } = g().redact(req);
        expect(
          request.messages.map((m) => m.content),
          s.name,
        ).to.deep.equal([BEFORE + mask(s), mask(s) + AFTER]);
      }
    });

    it('does not mask the unrelated tail of the previous message', () => {
      const s = samples[0]!;
      const encoded = Buffer.from(s.value).toString('base64');
      const req = { messages: [user('see the attachment, ok'), user(encoded)] };
      const { request } = g().redact(req);
      expect(request.messages.map((m) => m.content)).to.deep.equal(['see the attachment, ok', mask(s)]);
    });
  });

  describe('everywhere the model reads', () => {
    const s = samples.find((x) => x.name === 'openai project')!;
    const pemSample = samples.find((x) => x.name === 'pem ec')!;
    const aws = samples.find((x) => x.kind === 'aws-access-key-id')!;

    it('masks tool definitions, tool-call arguments and tool results, keeping JSON valid', () => {
      const req: ChatLike = {
        messages: [
          { role: 'system', content: 'You review code.' },
          user('deploy it'),
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'deploy', arguments: JSON.stringify({ key: s.value, pem: pemSample.value, n: 3 }) } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: JSON.stringify({ ok: true, echoed: aws.value }) },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'deploy',
              description: `Deploys with ${aws.value}`,
              parameters: { type: 'object', properties: { [s.value]: { type: 'string' } } },
            },
          },
        ],
      };
      const before = JSON.stringify(req);
      const { request, masked } = g().redact(req);
      expect(JSON.stringify(req)).to.equal(before);
      expect(masked).to.equal(5);
      const args = JSON.parse(request.messages[2]!.tool_calls![0]!.function.arguments) as Record<string, unknown>;
      expect(args).to.deep.equal({ key: '[REDACTED:openai-key]', pem: '[REDACTED:private-key]', n: 3 });
      expect(JSON.parse(request.messages[3]!.content!)).to.deep.equal({ ok: true, echoed: '[REDACTED:aws-access-key-id]' });
      expect(request.tools).to.deep.equal([
        {
          type: 'function',
          function: {
            name: 'deploy',
            description: 'Deploys with [REDACTED:aws-access-key-id]',
            parameters: { type: 'object', properties: { '[REDACTED:openai-key]': { type: 'string' } } },
          },
        },
      ]);
      expect(secretFindings(g().scan(request))).to.deep.equal([]);
      const where = secretFindings(g().scan(req)).map((f) => f.where);
      expect(where).to.include.members(['messages[2].tool_calls[0].function.arguments', 'messages[3].content', 'tools[0]']);
    });

    it('masks secrets in the upstream answer (text and tool-call arguments)', () => {
      const out = g().maskOutput(`Here is the key you asked about: ${s.value}.`);
      expect(out).to.deep.equal({ text: 'Here is the key you asked about: [REDACTED:openai-key].', masked: 1 });
      const args = g().maskOutput(JSON.stringify({ cmd: 'export', pem: pemSample.value }));
      expect(JSON.parse(args.text)).to.deep.equal({ cmd: 'export', pem: '[REDACTED:private-key]' });
      expect(g().maskOutput('nothing to see')).to.deep.equal({ text: 'nothing to see', masked: 0 });
    });
  });
});
