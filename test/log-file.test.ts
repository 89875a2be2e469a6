/**
 * A calm terminal: `PORTCULLIS_LOG_FILE` sends the log (a JSON line per request at info) to a file, so the
 * banner and its PAT stay on screen; at a terminal that is the default, into the data folder.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configRoot, FREE_PORTS, REPO } from './helpers/gateway.js';
import { untilOutput } from './helpers/wait.js';

async function run(env: Record<string, string>, command: (main: string) => [string, string[]]) {
  const root = configRoot();
  const [file, args] = command(join(REPO, 'src/main.ts'));
  const child = spawn(file, args, {
    env: {
      ...process.env,
      PORTCULLIS_ROOT: root,
      ...FREE_PORTS,
      PORTCULLIS_WATCH: '0',
      LOG_LEVEL: 'info',
      PORTCULLIS_STORE: 'memory',
      PORTCULLIS_ADMIN_TOKEN: 'x',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  await untilOutput(child, () => out, /export [^\n]*\n/, "the gateway's export line");
  const api = /serving the API on (\S+)/.exec(out)![1]!;
  expect((await fetch(`${api}/v1/models`)).status).to.equal(200);
  child.kill('SIGTERM');
  await once(child, 'exit');
  return { root, out, err };
}

describe('where npm start logs', function () {
  this.timeout(120_000);

  it('PORTCULLIS_LOG_FILE=<path>: every line in that file, none on stderr, and the banner says where', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pcl-log-')), 'gateway.log');
    const { out, err } = await run({ PORTCULLIS_LOG_FILE: file }, (main) => [process.execPath, ['--import', 'tsx', main]]);
    expect(out).to.contain(`  log: ${file} (PORTCULLIS_LOG_FILE=- keeps it on stderr)`);
    expect(readFileSync(file, 'utf8')).to.match(/"route":"\/v1\/models".*"event":"http.request"/);
    expect(err).to.not.contain('http.request');
  });

  it('at a terminal, by default: the request lines go to portcullis.log in the data folder, not to the screen', async () => {
    const { root, out } = await run({}, (main) => [
      'script',
      ['-qefc', `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(main)}`, '/dev/null'],
    ]);
    expect(out).to.match(/ {2}log: \S+\/\.portcullis\/data\/portcullis\.log/);
    expect(out).to.not.contain('http.request');
    const log = join(root, '.portcullis', 'data', 'portcullis.log');
    expect(existsSync(log)).to.equal(true);
    expect(readFileSync(log, 'utf8')).to.contain('"event":"http.request"');
  });

  it('not at a terminal, by default: on stderr as before (what a service manager collects)', async () => {
    const { out, err } = await run({}, (main) => [process.execPath, ['--import', 'tsx', main]]);
    expect(out).to.not.contain('  log: ');
    expect(err).to.contain('"event":"http.request"');
  });
});
