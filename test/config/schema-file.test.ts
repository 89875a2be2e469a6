/**
 * config/gateway.yaml's schema is declared once, in code (src/config/gateway-schema.ts, assembled from the
 * sections beside the code that reads them). The JSON file an operator's editor reads is written from it
 * (`npx tsx scripts/config-schema.ts`) and must be that, byte for byte; and the loader holds the file to
 * the code's schema, not to whatever copy lies beside it.
 */
import { expect } from 'chai';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'yaml';
import { gatewaySchemaText } from '../../src/config/gateway-schema.js';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/config/documents.js';
import { configRoot, REPO } from '../helpers/gateway.js';

describe('config/gateway.schema.json', () => {
  it('is the schema the code declares (run `npx tsx scripts/config-schema.ts` after changing a section)', () => {
    expect(readFileSync(join(REPO, 'config/gateway.schema.json'), 'utf8')).to.equal(gatewaySchemaText());
  });

  it('accepts the shipped config/gateway.yaml, as an editor checking it against the file would', () => {
    const validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile(JSON.parse(gatewaySchemaText()) as object);
    expect(validate(parse(readFileSync(join(REPO, 'config/gateway.yaml'), 'utf8'))), JSON.stringify(validate.errors)).to.equal(true);
  });

  it("is not what the loader reads: a root without it, or with a loosened copy, is held to the code's schema", () => {
    const root = configRoot();
    try {
      rmSync(join(root, 'config/gateway.schema.json'));
      expect(loadConfig(root, {}).gateway.data.version).to.be.a('string');
      writeFileSync(join(root, 'config/gateway.schema.json'), JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' }));
      const yaml = readFileSync(join(root, 'config/gateway.yaml'), 'utf8');
      writeFileSync(join(root, 'config/gateway.yaml'), yaml.replace(/^sessions:\n/m, 'sessions:\n  cookieFlavour: oat\n'));
      let problems: string[] = [];
      try {
        loadConfig(root, {});
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        problems = err.problems;
      }
      expect(problems).to.deep.equal(['config/gateway.yaml: /sessions has unknown key "cookieFlavour"']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
