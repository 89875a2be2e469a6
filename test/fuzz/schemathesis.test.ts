/**
 * schemathesis (pinned in test/fuzz/requirements.txt, installed by scripts/setup.sh into test/fuzz/.venv)
 * against a live gateway — real Redis, the recording upstream — fetching GET /openapi.json, authenticated
 * with a PAT whose principal holds credits. Its checks: no 5xx, every status, content type, header and body
 * as documented, so every error is `{error:{code,message}}` with a code of the table. Bounded in time
 * (PORTCULLIS_FUZZ_SECONDS, 60 by default).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configRoot, editFile, REPO } from '../helpers/gateway.js';
import { startWorld, type World } from '../helpers/world.js';

const SCHEMATHESIS = join(REPO, 'test/fuzz/.venv/bin/schemathesis');
const SECONDS = Number(process.env['PORTCULLIS_FUZZ_SECONDS'] ?? 60);

describe('schemathesis against a live gateway', function () {
  this.timeout((SECONDS + 120) * 1000);
  let w: World;

  before(async () => {
    expect(existsSync(SCHEMATHESIS), 'schemathesis is missing: run `npm run setup`').to.equal(true);
    const root = configRoot();
    // Room for the fuzzer: the rate limits have their own suite (test/app/rate-limits.test.ts).
    editFile(root, 'config/gateway.yaml', (t) => t.replace('perPrincipal: 600', 'perPrincipal: 100000').replace('perAddress: 300', 'perAddress: 100000'));
    w = await startWorld({ root });
  });
  after(() => w?.stop());

  it('finds no server error and no answer that breaks the document', async () => {
    const p = await w.gw.principal();
    expect((await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 1_000_000_000 })).status).to.equal(201);
    const args = [
      'run',
      `${w.gw.apiUrl}/openapi.json`,
      '--header',
      `Authorization: Bearer ${p.token}`,
      '--checks',
      'not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance',
      '--phases',
      'examples,coverage,fuzzing',
      '--max-time',
      String(SECONDS),
      '--workers',
      '1',
      '--request-timeout',
      '30',
      '--seed',
      '1',
      // Webhooks are authenticated by the sender's signature, not a PAT, and answer 503 while their processor
      // is not configured (as here): their own suites sign and send real events.
      '--exclude-path-regex',
      '^/v1/webhooks/',
    ];
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      // Run in a scratch folder: schemathesis and hypothesis keep caches in their working directory.
      const cwd = mkdtempSync(join(tmpdir(), 'portcullis-fuzz-'));
      execFile(SCHEMATHESIS, args, { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
      );
    });
    // The PAT is the one secret in the run: schemathesis prints it filtered; make sure it did.
    expect(output).not.to.contain(p.token);
    expect(code, output.split('\n').slice(-60).join('\n')).to.equal(0);
    expect(output).to.match(/Test cases:\s+\d+ generated, \d+ passed/);
  });
});
