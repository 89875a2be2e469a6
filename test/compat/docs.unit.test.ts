/**
 * docs/clients.md prints the parameter table; rules/chat-parameters.yaml is its one source. This fails when
 * the two disagree on a field or its treatment, so the docs never promise what the gateway does not do.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../helpers/gateway.js';
import { chatParameterTable } from '../../src/compat/parameters.js';

describe('docs/clients.md parameter table', () => {
  it('lists every field of rules/chat-parameters.yaml with its treatment and refusal code, and no other', () => {
    const doc = readFileSync(join(REPO, 'docs/clients.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `([a-z_]+)` \| (forwarded|honoured|dropped|refused) \| (.*) \|$/gm)].map((m) => ({
      name: m[1]!,
      treatment: m[2]!,
      code: /400 `([a-z-]+)`/.exec(m[3]!)?.[1] ?? null,
    }));
    const table = chatParameterTable().parameters.map((r) => ({ name: r.name, treatment: r.treatment, code: r.refused?.code ?? null }));
    expect(rows).to.deep.equal(table);
  });
});
