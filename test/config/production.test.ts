/**
 * The production checklist in docs/operators.md is true as written: its systemd unit passes
 * `systemd-analyze verify` (no comment glued to a value, no unparsable setting), the checklist names the
 * principal domain, the receipt key and the data key, and `portcullis check` validates a production-shaped
 * root offline without its live secrets (each must be referenced, not set).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { cli } from '../helpers/cli.js';
import { configRoot, editFile, REPO } from '../helpers/gateway.js';

const docs = readFileSync(join(REPO, 'docs/operators.md'), 'utf8');
const production = docs.slice(docs.indexOf('## Going to production'), docs.indexOf('## Observability'));

/** The unit as the page prints it (the ```ini block under "A systemd unit"). */
function unitFromDocs(): string {
  const section = production.slice(production.indexOf('### A systemd unit'));
  const block = /```ini\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('docs/operators.md has no ```ini systemd unit under "A systemd unit"');
  return block;
}

describe('production checklist (docs/operators.md)', function () {
  this.timeout(60_000);

  it('prints a systemd unit that `systemd-analyze verify` accepts without a warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-unit-'));
    const unit = join(dir, 'portcullis.service');
    writeFileSync(unit, unitFromDocs());
    // systemd-analyze comes with systemd (Debian: apt-get install systemd); it needs no running systemd.
    const run = await promisify(execFile)('systemd-analyze', ['verify', '--man=no', unit]).then(
      ({ stderr }) => ({ code: 0, stderr }),
      (e: { code: number | string; stderr?: string }) => {
        if (e.code === 'ENOENT') throw new Error('systemd-analyze is not installed: apt-get install systemd');
        return { code: e.code, stderr: e.stderr ?? '' };
      },
    );
    const aboutUnit = run.stderr.split('\n').filter((l) => l.includes(unit));
    expect(aboutUnit, 'warnings about the unit').to.deep.equal([]);
    expect(run.code).to.equal(0);
    // No setting carries an inline comment: systemd would take it as part of the value.
    for (const line of unitFromDocs().split('\n')) if (/^[A-Za-z]+=/.test(line)) expect(line, line).to.not.match(/\s#/);
  });

  it('names the principal domain, the receipt key and the data key', () => {
    for (const name of ['principalDomain', 'PORTCULLIS_RECEIPT_KEY', 'receipts.keyFile', 'PORTCULLIS_DATA_KEY']) {
      expect(production, name).to.include(`\`${name}`);
    }
  });

  it('`portcullis check` validates a production root offline: secrets referenced, not set', async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('principalDomain: portcullis.localhost', 'principalDomain: gateway.example.com')
        .replace(/shared:\n {4}origin: \{ demo: true \}/, 'shared:\n    origin: { baseUrl: "http://10.0.0.5:8000/v1", apiKeyEnv: PRODUCTION_SHARED_KEY }'),
    );
    const env = { PRODUCTION_SHARED_KEY: '' };
    const ok = await cli(['check', '--root', root], env);
    expect(ok.stderr).to.equal('');
    expect(ok.code).to.equal(0);
    expect(ok.stdout).to.include('configuration is valid');
    expect(ok.stdout).to.match(/PRODUCTION_SHARED_KEY {2}\(config\/gateway\.yaml: \/routes\/shared\/origin\/apiKeyEnv; not set here\)/);

    // A real mistake is still refused: a key name in the wrong place fails the schema.
    editFile(root, 'config/gateway.yaml', (t) => t.replace('apiKeyEnv: PRODUCTION_SHARED_KEY', 'apiKey: PRODUCTION_SHARED_KEY'));
    const bad = await cli(['check', '--root', root], env);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('/routes/shared/origin');
  });
});
