/**
 * A Redis that answers but refuses what the gateway needs of it: `npm start` (src/main.ts in its own process,
 * as an operator runs it) stops at once with one line naming the refused command and the fix, exit code 78
 * as on a configuration error, and no stack trace. Without CLIENT (`rename-command CLIENT ""`) the identity
 * cache cannot track, so the gateway refuses to start with the cache on and starts and serves with
 * `store.identityCacheEntries: 0`; without HELLO no connection can speak RESP3, so the gateway refuses either way.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { configRoot, editFile, FREE_PORTS, REPO } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

function start(redisUrl: string, entries?: number) {
  const root = configRoot();
  if (entries !== undefined)
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace('store:\n  kind: memory', `store:\n  kind: redis\n  url: ${redisUrl}\n  identityCacheEntries: ${entries}`),
    );
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/main.ts')], {
    env: { ...process.env, PORTCULLIS_ROOT: root, ...FREE_PORTS, PORTCULLIS_WATCH: '0', LOG_LEVEL: 'warn', REDIS_URL: redisUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { child, out: () => out, err: () => err };
}

describe('a Redis that refuses what the gateway needs', function () {
  this.timeout(60_000);
  const servers: RedisServer[] = [];
  const children: ReturnType<typeof start>['child'][] = [];
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await Promise.all(servers.map((s) => s.stop()));
  });

  async function redisWithout(command: string): Promise<RedisServer> {
    const server = await startRedisServer({ args: ['--rename-command', command, ''] });
    servers.push(server);
    return server;
  }

  it('without CLIENT: refuses to start with the identity cache on, naming CLIENT TRACKING and the setting that turns the cache off', async () => {
    const redis = await redisWithout('CLIENT');
    const run = start(redis.url);
    children.push(run.child);
    const [code] = await once(run.child, 'exit');
    expect(code).to.equal(78);
    expect(run.err()).to.include('redis refused CLIENT TRACKING');
    expect(run.err()).to.include('store.identityCacheEntries: 0');
    expect(run.err()).to.not.match(/\n\s+at /);
    expect(run.out()).to.not.include('serving the API');
  });

  it('without CLIENT: starts and serves with store.identityCacheEntries: 0', async () => {
    const redis = await redisWithout('CLIENT');
    const run = start(redis.url, 0);
    children.push(run.child);
    const exited = once(run.child, 'exit').then(([code]) => code);
    const serving = new Promise<'serving'>((resolve) => run.child.stdout.on('data', () => run.out().includes('serving the API') && resolve('serving')));
    expect(await Promise.race([serving, exited])).to.equal('serving');
    run.child.kill('SIGKILL');
    await exited;
  });

  it('without HELLO: refuses to start even with the cache off, naming HELLO 3 (RESP3)', async () => {
    const redis = await redisWithout('HELLO');
    const run = start(redis.url, 0);
    children.push(run.child);
    const [code] = await once(run.child, 'exit');
    expect(code).to.equal(78);
    expect(run.err()).to.include('redis refused HELLO 3');
    expect(run.err()).to.not.match(/\n\s+at /);
  });
});
