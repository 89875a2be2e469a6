/**
 * A reload is honest about what it could not apply: a start-only setting (listeners, store, receipt log,
 * listener bounds, shutdown timings, principal domain, demo bootstrap) changed on disk is reported as
 * "needs restart" by the admin API and the CLI, the rest of the edit is applied, and docs/operators.md
 * lists exactly the keys the code treats as start-only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { START_ONLY_KEYS } from '../../src/config/start-only.js';
import { cli } from '../helpers/cli.js';
import { editFile, REPO, startTestGateway } from '../helpers/gateway.js';

describe('config: reload reports start-only settings as needing a restart', function () {
  this.timeout(60_000);

  it('applies the rest of the edit and names shutdown.drainDelayMs as needing a restart', async () => {
    const gw = await startTestGateway();
    try {
      editFile(gw.root, 'config/gateway.yaml', (t) => t.replace('drainDelayMs: 0', 'drainDelayMs: 5000').replace(/^version: .*$/m, 'version: "2099.3.3"'));
      const res = await gw.admin('POST', '/reload');
      expect(res.status).to.equal(200);
      expect(res.body.versions.config).to.equal('2099.3.3');
      expect(res.body.needsRestart).to.deep.equal(['shutdown.drainDelayMs']);
      expect(res.body.workers[0].needsRestart).to.deep.equal(['shutdown.drainDelayMs']);

      // The CLI says it too, in words.
      const out = await cli(['admin', 'reload'], { PORTCULLIS_ADMIN_URL: gw.adminUrl, PORTCULLIS_ADMIN_TOKEN: gw.adminToken });
      expect(out.code).to.equal(0);
      expect(out.stdout).to.include('needs restart (read, not applied): shutdown.drainDelayMs');

      // A setting a reload does apply is not reported.
      editFile(gw.root, 'config/gateway.yaml', (t) => t.replace(/syncWaitMs: \d+/, 'syncWaitMs: 12345'));
      const hot = await gw.admin('POST', '/reload');
      expect(hot.body.needsRestart).to.deep.equal(['shutdown.drainDelayMs']); // still differs from the start
      expect(gw.holder.current.gateway.timeouts.syncWaitMs).to.equal(12345);
    } finally {
      await gw.close();
    }
  });

  it('reports nothing when no start-only setting changed', async () => {
    const gw = await startTestGateway();
    try {
      const res = await gw.admin('POST', '/reload');
      expect(res.body.needsRestart).to.deep.equal([]);
    } finally {
      await gw.close();
    }
  });

  it('docs/operators.md lists every start-only key', () => {
    const docs = readFileSync(join(REPO, 'docs/operators.md'), 'utf8');
    const section = /<!-- start-only -->([\s\S]*?)<!-- \/start-only -->/.exec(docs)?.[1] ?? '';
    const listed = [...section.matchAll(/`([a-zA-Z]+)`/g)].map((m) => m[1]);
    expect([...new Set(listed)].sort()).to.deep.equal([...START_ONLY_KEYS].sort());
  });
});
