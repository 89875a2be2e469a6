/**
 * One table of errors: docs/errors.md (the error table the README links) and src/errors.ts must list the same codes with the same
 * statuses, so a code added in one place and not the other fails here.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERRORS } from '../src/errors.js';
import { REPO } from './helpers/gateway.js';

describe('error table', () => {
  it('docs/errors.md lists exactly the codes and statuses of src/errors.ts', () => {
    const section = readFileSync(join(REPO, 'docs/errors.md'), 'utf8');
    const rows = [...section.matchAll(/^\| (\d{3}) \| `([a-z0-9-]+)` \|/gm)].map((m) => [m[2], Number(m[1])]);
    const documented = Object.fromEntries(rows);
    const coded = Object.fromEntries(Object.entries(ERRORS).map(([code, e]) => [code, e.status]));
    expect(rows.length, 'duplicate rows in docs/errors.md').to.equal(Object.keys(documented).length);
    expect(documented).to.deep.equal(coded);
  });
});
