/**
 * secret-hygiene on sets written blind by attackers who read only the Secrets section of docs/guardrails.md
 * (test/fixtures/guard/secrets-blind/README.md, test/fixtures/guard/secrets-blind2/README.md): rows to be
 * masked, each with a secret under a disguise of the author's choosing, and look-alikes to be kept. Read through
 * the runtime's redact (the compiled scanner) and through the TypeScript reference: a masked row must be masked
 * with nothing planted left intact (the secret and each of its pieces), a kept row must reach the model
 * untouched, and both engines must mask alike.
 *
 * The first set, scored once on main before any fix: 170 of 174 masked, 74 of 76 kept; no row is excepted.
 * The second, scored once on main before any fix: 176 of 182 masked, 80 of 80 kept; three rows are excepted
 * below, each with the reason it is left. A row added as an exception must be named with its reason.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { ChatLike } from '../../src/guard/index.js';
import { FIXTURES_DIR, guardrails, referenceGuardrails } from './helpers/guardrails.js';

interface Row {
  id: string;
  expect: 'masked' | 'kept';
  kind: string;
  tactic: string;
  messages: ChatLike['messages'];
  tools?: ChatLike['tools'];
  planted: string[];
}

interface BlindSet {
  name: string;
  file: string;
  masked: number;
  kept: number;
  /** Masked rows left missed, by id, with why: each is outside what the Secrets section promises. */
  exceptions: Readonly<Record<string, string>>;
}

const SETS: BlindSet[] = [
  { name: 'the blind attacker set', file: 'secrets-blind/set-sec.jsonl', masked: 174, kept: 76, exceptions: {} },
  {
    name: 'the second blind attacker set',
    file: 'secrets-blind2/set-sec2.jsonl',
    masked: 182,
    kept: 80,
    exceptions: {
      // The base64 run starts mid-group: what it decodes to begins `hp_…`, the token's `g` cut off, so no whole
      // token is in the text to be found (the author's error).
      'r-0233': "base64 whose decoding has lost the token's first letter",
      // HTML character references broken in the middle of a reference by a line break (`&#8` then `9;`): a
      // reference spread through a block is read, one cut inside itself is not (not promised).
      'r-0177': 'HTML references cut inside a reference across lines',
      // `github_pat_` laced with underscores when its body holds an underscore of its own: the lacing and the
      // body's joiner cannot be told apart (the section says so of a Google key laced with its own joiner).
      'r-0211': 'a fine-grained token laced with the joiner its body holds',
    },
  },
];

const rowsOf = (file: string): Row[] =>
  readFileSync(`${FIXTURES_DIR}${file}`, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);

// A planted string survives when the masked request, as JSON, still holds it (as JSON writes it).
const intact = (redacted: ChatLike, planted: readonly string[]): string[] => {
  const json = JSON.stringify(redacted);
  return planted.filter((p) => json.includes(JSON.stringify(p).slice(1, -1)));
};

const request = (row: Row): ChatLike => ({ messages: row.messages, ...(row.tools ? { tools: row.tools } : {}) });

for (const set of SETS) {
  const rows = rowsOf(set.file);

  describe(`guard: ${set.name} for secret masking`, () => {
    it(`is the vendored set: ${set.masked + set.kept} rows, ${set.masked} to be masked and ${set.kept} to be kept, each with something planted`, () => {
      expect(rows).to.have.length(set.masked + set.kept);
      expect(rows.filter((r) => r.expect === 'masked')).to.have.length(set.masked);
      expect(rows.filter((r) => r.expect === 'kept')).to.have.length(set.kept);
      for (const r of rows) expect(r.planted.length, r.id).to.be.greaterThan(0);
      for (const id of Object.keys(set.exceptions)) expect(rows.find((r) => r.id === id)?.expect, id).to.equal('masked');
    });

    it('masks every secret of the set with nothing planted left intact, but the rows named as exceptions', () => {
      const missed: string[] = [];
      for (const row of rows.filter((r) => r.expect === 'masked' && !(r.id in set.exceptions))) {
        const { request: redacted, masked } = guardrails().redact(request(row));
        const left = intact(redacted, row.planted);
        if (masked === 0 || left.length > 0) missed.push(`${row.id} ${row.kind} [${row.tactic}] masked ${masked}, ${left.length} planted intact`);
      }
      expect(missed).to.deep.equal([]);
    });

    if (Object.keys(set.exceptions).length > 0) {
      it('still misses the rows named as exceptions (a fix that reaches one removes it from the list)', () => {
        const reached = rows
          .filter((r) => r.id in set.exceptions)
          .filter((row) => intact(guardrails().redact(request(row)).request, row.planted).length === 0)
          .map((r) => `${r.id}: ${set.exceptions[r.id]}`);
        expect(reached).to.deep.equal([]);
      });
    }

    it('leaves every look-alike of the set untouched', () => {
      const overmasked: string[] = [];
      for (const row of rows.filter((r) => r.expect === 'kept')) {
        const req = request(row);
        const { request: redacted, masked } = guardrails().redact(req);
        if (masked > 0 || JSON.stringify(redacted) !== JSON.stringify(req)) overmasked.push(`${row.id} [${row.tactic}] masked ${masked}`);
      }
      expect(overmasked).to.deep.equal([]);
    });

    it('masks every row alike in the compiled scanner and the TypeScript reference', () => {
      for (const row of rows) {
        const a = guardrails().redact(request(row));
        const b = referenceGuardrails().redact(request(row));
        expect(JSON.stringify(a.request), row.id).to.equal(JSON.stringify(b.request));
        expect(a.masked, row.id).to.equal(b.masked);
      }
    });
  });
}
