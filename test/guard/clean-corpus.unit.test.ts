/**
 * False positives, measured: ordinary source code, configuration and security prose (test/fixtures/guard/
 * clean) - git SHAs, sha256/sha512 digests, base64 images, UUIDs, `sk-learn`, `task-runner`, AKIA-like
 * substrings inside longer hashes, a public certificate, docs about private keys and passkeys - read as one
 * message per file, cut into many small messages (so the boundary pass runs), and as tool results.
 *
 * The figures are printed (redactions per 1,000 lines, block hits, flags) and asserted: no redaction and
 * no block. Flags from pii-passkeys are expected - the docs talk about private keys and passkeys.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import type { ChatLike } from '../../src/guard/index.js';
import { FIXTURES_DIR, blockFindings, guardrails, user } from './helpers/guardrails.js';

const dir = `${FIXTURES_DIR}clean/`;
const files = readdirSync(dir).sort();

function chunks(text: string, lines: number): string[] {
  const all = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < all.length; i += lines) out.push(all.slice(i, i + lines).join('\n') + '\n');
  return out;
}

describe('guard: clean corpus (false positives)', () => {
  const g = () => guardrails();
  const corpus = files.map((f) => ({ file: f, text: readFileSync(dir + f, 'utf8') }));
  const totalLines = corpus.reduce((n, c) => n + c.text.split('\n').length, 0);

  it('is a realistic corpus of a few hundred lines', () => {
    expect(totalLines).to.be.greaterThan(400);
    const all = corpus.map((c) => c.text).join('\n');
    for (const marker of ['sk-learn', 'task-runner', 'AKIA', 'data:image/png;base64,', 'sha512-', 'BEGIN CERTIFICATE', 'private key', 'passkey']) {
      expect(all, marker).to.include(marker);
    }
  });

  const layouts: Array<[string, (texts: string[]) => ChatLike]> = [
    ['one message per file', (texts) => ({ messages: texts.map(user) })],
    ['messages of 7 lines', (texts) => ({ messages: texts.flatMap((t) => chunks(t, 7)).map(user) })],
    [
      'tool results of 20 lines',
      (texts) => ({
        messages: texts.flatMap((t) =>
          chunks(t, 20).flatMap((c, i) => [
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: `r${i}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `f${i}` }) } }],
            },
            { role: 'tool', tool_call_id: `r${i}`, content: c },
          ]),
        ),
      }),
    ],
  ];

  for (const [layout, build] of layouts) {
    it(`redacts nothing and blocks nothing, read as ${layout}`, () => {
      const req = build(corpus.map((c) => c.text));
      const scan = g().scan(req);
      const { request, masked } = g().redact(req);
      const blocks = blockFindings(scan);
      const redactions = scan.findings.filter((f) => f.action === 'redact');
      const flags = scan.findings.filter((f) => f.action === 'flag');
      console.log(
        `      clean corpus (${layout}): ${totalLines} lines, ${req.messages.length} messages; ` +
          `masked spans ${masked} (${((masked * 1000) / totalLines).toFixed(2)} per 1,000 lines), ` +
          `redact findings ${redactions.length}, block hits ${blocks.length}, flags ${flags.length}`,
      );
      expect(blocks, 'block findings').to.deep.equal([]);
      expect(redactions, 'redact findings').to.deep.equal([]);
      expect(masked).to.equal(0);
      expect(request).to.deep.equal(req);
    });
  }

  it('flags the documentation about private keys and passkeys, and only flags it', () => {
    const notes = corpus.find((c) => c.file.startsWith('security-notes'))!;
    const scan = g().scan({ messages: [user(notes.text)] });
    expect(scan.ruleIds).to.deep.equal(['pii-passkeys']);
    expect(scan.findings.every((f) => f.action === 'flag')).to.equal(true);
  });

  it('leaves a private-key header without a body (code and docs that name the format) unmasked', () => {
    const header = ['-----BEGIN', 'PRIVATE', 'KEY-----'].join(' ');
    const code = `if (pem.startsWith('${header}')) {\n  return parsePkcs8(pem);\n}\n// The header is followed by base64 lines; placeholder: ${header}\n...\n`;
    const { masked } = g().redact({ messages: [user(code)] });
    expect(masked).to.equal(0);
    expect(g().scan({ messages: [user(code)] }).ruleIds).to.deep.equal(['pii-passkeys']);
  });
});
