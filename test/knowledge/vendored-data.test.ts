/**
 * The vendored evidence file is exactly what scripts/knowledge-build.mjs makes from the vendored sources
 * and the pinned cwe-sdk package: nobody can edit the data file by hand, or update a source without
 * rebuilding it, without this failing.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../helpers/gateway.js';

describe('knowledge: vendored data', () => {
  it('data/knowledge/evidence.json.gz is what the build script makes from data/knowledge/sources and cwe-sdk', function () {
    this.timeout(120_000);
    const out = mkdtempSync(join(tmpdir(), 'portcullis-evidence-'));
    execFileSync(process.execPath, [join(REPO, 'scripts/knowledge-build.mjs'), '--out', out], { stdio: 'pipe' });
    expect(readFileSync(join(out, 'evidence.json.gz')).equals(readFileSync(join(REPO, 'data/knowledge/evidence.json.gz')))).to.equal(true);
  });
});
