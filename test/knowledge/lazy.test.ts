/**
 * The knowledge is loaded on first use, not at start (it is about 40 MiB of heap a gateway nobody searches
 * on never needs): a gateway starts without it, and the first search after the start answers exactly what
 * the knowledge loaded up front answers.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { sharedKnowledge } from '../../src/knowledge/index.js';

describe('knowledge loaded on first use', () => {
  it('a fresh gateway starts without it; its first search answers as the loaded knowledge does', async function () {
    this.timeout(60_000);
    // Its own process: in this one another test may already have loaded the shared instance.
    const script = fileURLToPath(new URL('./lazy-start.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], { maxBuffer: 16 * 1024 * 1024 });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as { loadedAtStart: boolean; status: number; body: any; loadedAfter: boolean };
    expect(out.loadedAtStart).to.equal(false);
    expect(out.status).to.equal(200);
    expect(out.loadedAfter).to.equal(true);
    const expected = sharedKnowledge().search.search('sql injection', { limit: 5, offset: 0 });
    expect(out.body.data).to.deep.equal(expected.data);
    expect(out.body.total).to.equal(expected.total);
    expect(out.body.data[0]).to.include({ id: 'CWE-89' });
  });
});
