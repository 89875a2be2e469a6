/**
 * The rules documents: guardrails.yaml carries the five rules of the spec with their actions and a
 * reviewer-readable description; firewall.yaml and compliance.yaml state the limits and commitments of the
 * spec; all three are versioned, point editors at their schema and pass it; and a bad edit is refused with
 * an error that names the file and the JSON path.
 */
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDocument } from '../../src/config/documents.js';
import { compileGuardrails, loadGuardrailsDoc, type GuardrailsDoc } from '../../src/guard/index.js';
import { DECODERS, SECRET_KINDS } from '../../src/guard/types.js';
import { RULES_DIR } from './helpers/guardrails.js';

describe('guard: rules documents', () => {
  const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);

  it('holds the five rules of the spec, with their actions', () => {
    expect(Object.fromEntries(doc.rules.map((r) => [r.id, r.action]))).to.deep.equal({
      'csam-block': 'block',
      'cbrn-block': 'block',
      'fraud-block': 'block',
      'secret-hygiene': 'redact',
      'pii-passkeys': 'flag',
    });
    for (const r of doc.rules) expect(r.description.length, r.id).to.be.greaterThan(80);
  });

  it('documents the mask format', () => {
    const secrets = doc.rules.find((r) => r.id === 'secret-hygiene')!;
    expect(secrets.description).to.include('[REDACTED:openai-key]');
    expect(secrets.detectors).to.deep.include({
      id: 'credential-shapes',
      kind: 'secrets',
      description: 'Credential shapes by kind; see src/guard/secrets.ts for the exact shapes.',
      // Every kind the detector knows, in its order: the file names them all.
      kinds: [...SECRET_KINDS],
      decode: [...DECODERS],
      boundaries: true,
      mask: '[REDACTED:{kind}]',
    });
  });

  for (const name of ['guardrails', 'firewall', 'compliance']) {
    it(`${name}.yaml is versioned, points at its schema and passes it`, () => {
      const text = readFileSync(`${RULES_DIR}${name}.yaml`, 'utf8');
      expect(text.split('\n')[0]).to.equal(`# yaml-language-server: $schema=./${name}.schema.json`);
      const loaded = loadDocument<Record<string, unknown>>(RULES_DIR, `${name}.yaml`);
      expect(loaded.version).to.match(/^\d{4}\.\d{2}\.\d{2}$/);
      const schema = JSON.parse(readFileSync(`${RULES_DIR}${name}.schema.json`, 'utf8')) as { $schema: string };
      expect(schema.$schema).to.equal('https://json-schema.org/draft/2020-12/schema');
    });
  }

  it('firewall.yaml states the limits and wires the gateway enforces', () => {
    const fw = loadDocument<Record<string, Record<string, unknown>>>(RULES_DIR, 'firewall.yaml').data;
    expect(fw['request']).to.deep.equal({ maxBodyBytes: 2 * 1024 * 1024, contentType: 'application/json' });
    expect(fw['chat']).to.include({ maxInputChars: 524_288, maxTools: 128, maxTurns: 256, maxOutputTokens: 32_768 });
    const notOffered = (fw['wires']!['notOffered'] as Array<{ path: string; status: number }>).map((w) => [w.path, w.status]);
    expect(notOffered).to.deep.equal([
      ['/v1/messages', 405],
      ['/v1/responses', 405],
      ['/v1beta/models/{model}:generateContent', 405],
    ]);
  });

  it('compliance.yaml states the local-execution boundary, receipts, retention and the free allowance', () => {
    const c = loadDocument<Record<string, Record<string, unknown>>>(RULES_DIR, 'compliance.yaml').data;
    expect((c['aup']!['localExecutionBoundary'] as { serviceRunsTools: boolean }).serviceRunsTools).to.equal(false);
    expect(c['receipts']!['statement']).to.include('receipt');
    expect(c['dataRetention']!['logs']).to.be.a('string');
    expect(c['freeAllowance']!['perDay']).to.equal(1000);
  });

  describe('a bad edit', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'portcullis-guard-'));
      copyFileSync(`${RULES_DIR}guardrails.schema.json`, join(dir, 'guardrails.schema.json'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    const attempt = (yaml: string): string => {
      writeFileSync(join(dir, 'guardrails.yaml'), yaml);
      try {
        loadGuardrailsDoc(join(dir, 'guardrails.yaml'));
      } catch (err) {
        return (err as Error).message;
      }
      return 'loaded';
    };
    const base = readFileSync(`${RULES_DIR}guardrails.yaml`, 'utf8');

    it('is refused with the file and JSON path of an unknown key', () => {
      const message = attempt(
        base.replace(
          '        boundaries: true\n        mask: "[REDACTED:{kind}]"\n\n',
          '        boundaries: true\n        mask: "[REDACTED:{kind}]"\n        masks: everything\n\n',
        ),
      );
      expect(message).to.include('guardrails.yaml: /rules/3/detectors/0');
      expect(message).to.include('masks');
    });

    it('is refused with the file and JSON path of an unknown action', () => {
      const message = attempt(base.replace('action: flag', 'action: quarantine'));
      expect(message).to.include('guardrails.yaml: /rules/4/action');
    });

    it('is refused for duplicate keys and YAML errors, naming the file', () => {
      expect(attempt('version: "1"\nversion: "2"\nrules: []\n')).to.include('guardrails.yaml');
      expect(attempt('version: "1"\nrules: [\n')).to.include('guardrails.yaml');
    });
  });

  describe('compiling', () => {
    const clone = (): GuardrailsDoc => structuredClone(doc);

    it('compiles the rules file once into a runtime with its version', () => {
      expect(compileGuardrails(doc).version).to.equal(doc.version);
    });

    it('refuses documents it cannot honour', () => {
      const twice = clone();
      twice.rules.push(structuredClone(twice.rules[0]!));
      expect(() => compileGuardrails(twice)).to.throw(/defined twice/);

      const lexicalRedact = clone();
      lexicalRedact.rules[3]!.detectors.push({ id: 'words', kind: 'lexical', any: ['password'] });
      expect(() => compileGuardrails(lexicalRedact)).to.throw(/cannot redact/);

      const shortPrefix = clone();
      shortPrefix.rules[0]!.detectors.push({ id: 'short', kind: 'lexical', any: ['ab*'] });
      expect(() => compileGuardrails(shortPrefix)).to.throw(/prefix/);

      const emptyTerm = clone();
      emptyTerm.rules[0]!.detectors.push({ id: 'empty', kind: 'lexical', any: ['---'] });
      expect(() => compileGuardrails(emptyTerm)).to.throw(/no words/);
    });
  });
});
