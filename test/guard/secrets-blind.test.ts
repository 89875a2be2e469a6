/**
 * secret-hygiene on a set written blind by an attacker who read only the Secrets section of docs/guardrails.md
 * (test/fixtures/guard/secrets-blind/README.md): 174 rows to be masked, each with a secret under a disguise of
 * the author's choosing, and 76 look-alikes to be kept. Read through the runtime's redact (the compiled scanner)
 * and through the TypeScript reference: a masked row must be masked with nothing planted left intact (the secret
 * and each of its pieces), a kept row must reach the model untouched, and both engines must mask alike.
 *
 * Scored once on main before any fix: 170 of 174 masked, 74 of 76 kept. No row is excepted now; a row added
 * here as an exception must be named with the reason it is left.
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

const rows: Row[] = readFileSync(`${FIXTURES_DIR}secrets-blind/set-sec.jsonl`, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Row);

// A planted string survives when the masked request, as JSON, still holds it (as JSON writes it).
const intact = (redacted: ChatLike, planted: readonly string[]): string[] => {
  const json = JSON.stringify(redacted);
  return planted.filter((p) => json.includes(JSON.stringify(p).slice(1, -1)));
};

describe('guard: the blind attacker set for secret masking', () => {
  const request = (row: Row): ChatLike => ({ messages: row.messages, ...(row.tools ? { tools: row.tools } : {}) });

  it('is the vendored set: 250 rows, 174 to be masked and 76 to be kept, each with something planted', () => {
    expect(rows).to.have.length(250);
    expect(rows.filter((r) => r.expect === 'masked')).to.have.length(174);
    expect(rows.filter((r) => r.expect === 'kept')).to.have.length(76);
    for (const r of rows) expect(r.planted.length, r.id).to.be.greaterThan(0);
  });

  it('masks every secret of the set with nothing planted left intact', () => {
    const missed: string[] = [];
    for (const row of rows.filter((r) => r.expect === 'masked')) {
      const { request: redacted, masked } = guardrails().redact(request(row));
      const left = intact(redacted, row.planted);
      if (masked === 0 || left.length > 0) missed.push(`${row.id} ${row.kind} [${row.tactic}] masked ${masked}, ${left.length} planted intact`);
    }
    expect(missed).to.deep.equal([]);
  });

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
