/**
 * `PORTCULLIS_WORKERS`: `npm start` as several processes on one port per listener (src/workers.ts). Started
 * as an operator would (src/main.ts in its own process) on a real redis-server: the workers share the API
 * port and each takes connections, a call made through any of them is billed in the one store, a worker
 * that dies is replaced, a SIGTERM stops them all cleanly, and the memory store or a bad count is refused
 * with a clear message.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, cpSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { configRoot, editFile, FREE_PORTS, REPO } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';

interface Run {
  root: string;
  child: ChildProcess;
  out: () => string;
  err: () => string;
}

function start(env: Record<string, string>): Run {
  const root = configRoot();
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/main.ts')], {
    env: { ...process.env, PORTCULLIS_ROOT: root, ...FREE_PORTS, PORTCULLIS_WATCH: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { root, child, out: () => out, err: () => err };
}

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Pids of the worker processes whose parent is `pid` (the supervisor). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      // The supervisor's children are its workers, and, while tsx compiles a file for it, esbuild's service.
      if (ppid === pid && !readFileSync(`/proc/${d}/cmdline`, 'utf8').includes('esbuild')) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Established TCP connections on local `port` whose socket `pid` holds (from /proc: no tool needed). */
function connectionsHeldBy(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      if (local === port && f[3] === '01') inodes.add(f[9]!);
    }
  }
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m && inodes.has(m[1]!)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

function post(agent: Agent, url: string, token: string, body: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** A GET on a connection of its own (no keep-alive), so that consecutive ones go to different workers. */
function getFresh(url: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { authorization: `Bearer ${token}`, connection: 'close' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The sum of a Prometheus counter's samples whose labels include every `label="value"` given. */
function sumOf(text: string, name: string, labels: string[]): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('several worker processes (PORTCULLIS_WORKERS)', function () {
  this.timeout(120_000);
  let redis: RedisServer;
  let upstream: RecordingUpstream;
  const runs: Run[] = [];
  const ownRedis: RedisServer[] = [];

  before(async () => {
    redis = await startRedisServer();
    upstream = await startRecordingUpstream();
  });
  after(async () => {
    for (const r of runs) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    await upstream?.stop();
    await redis?.stop();
    for (const r of ownRedis) await r.stop();
  });

  it('refuses the memory store with more than one worker, saying why', async () => {
    const run = start({ PORTCULLIS_WORKERS: '2', PORTCULLIS_STORE: 'memory' });
    runs.push(run);
    const [code] = await once(run.child, 'exit');
    expect(code).to.equal(78);
    expect(run.err()).to.match(/PORTCULLIS_WORKERS=2 asks for 2 worker processes, but the store is "memory"/);
    expect(run.out()).to.not.include('serving the API');
  });

  for (const bad of ['many', '0', '2.5', '257']) {
    it(`refuses PORTCULLIS_WORKERS=${bad} at start, saying what it takes`, async () => {
      const run = start({ PORTCULLIS_WORKERS: bad, REDIS_URL: redis.url });
      runs.push(run);
      const [code] = await once(run.child, 'exit');
      expect(code).to.equal(78);
      expect(run.err()).to.include(`PORTCULLIS_WORKERS must be a whole number from 1 to 256, or "auto" (one per core); it is "${bad}"`);
      expect(run.out()).to.not.include('serving the API');
    });
  }

  it('PORTCULLIS_WORKERS=auto on Redis runs one worker per core, and each worker serves calls on the shared ports', async () => {
    const cores = availableParallelism();
    // A Redis of its own: the demo principal of this start must not be counted by the tests after it.
    const own = await startRedisServer();
    ownRedis.push(own);
    const run = start({
      PORTCULLIS_WORKERS: 'auto',
      REDIS_URL: own.url,
      PORTCULLIS_ADMIN_TOKEN: 'workers-operator-token',
      PORTCULLIS_ROUTE_SHARED_URL: upstream.baseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: upstream.baseUrl,
    });
    runs.push(run);
    await until('the banner', () => /admin API on \S+\n[\s\S]*operator token/.test(run.out()));
    const [, apiUrl, adminUrl] = /serving the API on (\S+) and the admin API on (\S+)/.exec(run.out())!;
    const pat = /demo PAT \(blue team\): (\S+)/.exec(run.out())![1]!;
    // One worker per core (a single process serving itself on one core), each answering once ready.
    const expected = cores > 1 ? cores : 0;
    await until(`${cores} workers ready`, () => (run.err().match(/"event":"gateway.worker_ready"/g) ?? []).length === expected);
    const workers = cores > 1 ? childrenOf(run.child.pid!) : [run.child.pid!];
    expect(workers).to.have.length(cores);

    // Chat calls on as many connections as twice the cores, at once: every worker holds some of them, and
    // every call is answered.
    const port = Number(new URL(apiUrl!).port);
    const agent = new Agent({ keepAlive: true, maxSockets: 2 * cores });
    const body = { model: 'shared-general-a', max_tokens: 16, messages: [{ role: 'user', content: 'Summarise CVE-2021-44228 for a patch note.' }] };
    const answers = await Promise.all(
      Array.from({ length: 2 * cores }, (_, i) => post(agent, `${apiUrl}/v1/chat/completions`, pat, { ...body, user: `auto${i}` })),
    );
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
    for (const pid of workers) expect(connectionsHeldBy(pid, port), `worker ${pid} holds some of the connections`).to.be.above(0);
    agent.destroy();

    // What an operator sees: GET /admin/runtime names the process that answered; new connections reach each worker.
    const answered = new Set<number>();
    for (let i = 0; i < 2 * cores; i++) {
      const r = await getFresh(`${adminUrl}/admin/runtime`, 'workers-operator-token');
      expect(r.status).to.equal(200);
      answered.add((JSON.parse(r.text) as { worker: { pid: number } }).worker.pid);
    }
    expect([...answered].sort()).to.deep.equal([...workers].sort());

    run.child.kill('SIGTERM');
    const [code] = await once(run.child, 'exit');
    expect(code).to.equal(0);
    for (const pid of workers) expect(() => process.kill(pid, 0), `worker ${pid} is gone`).to.throw();
  });

  it('serves one port from two workers on a shared Redis store, replaces a dead worker, and stops cleanly', async () => {
    const run = start({
      PORTCULLIS_WORKERS: '2',
      REDIS_URL: redis.url,
      PORTCULLIS_ROUTE_SHARED_URL: upstream.baseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: upstream.baseUrl,
    });
    runs.push(run);
    await until('the banner', () => /admin API on \S+\n[\s\S]*operator token/.test(run.out()));
    const [, apiUrl, adminUrl] = /serving the API on (\S+) and the admin API on (\S+)/.exec(run.out())!;
    const adminToken = /operator token \(generated[^)]*\): (\S+)/.exec(run.out())?.[1];
    expect(adminToken, 'the supervisor generates one operator token and the banner shows it').to.be.a('string');
    const demoPat = /demo PAT \(blue team\): (\S+)/.exec(run.out())![1]!;
    await until('two workers', () => childrenOf(run.child.pid!).length === 2);
    const workers = childrenOf(run.child.pid!);
    // Both listen: wait until each has announced itself (the banner comes from the first only).
    await until('both workers started', () => (run.err().match(/"event":"gateway.started"/g) ?? []).length === 2);
    expect(run.out().match(/serving the API/g)).to.have.length(1);
    // Each worker is started with V8's young generation at the gateway's size (src/heap.ts), as npm start and
    // the image start a single process: the supervisor adds the flag the operator did not give.
    for (const pid of workers)
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'), `worker ${pid}'s node flags`).to.include('--max-semi-space-size=32');

    // Four connections held open at once: the primary hands them out round-robin, so each worker holds some,
    // and the operator token works whichever worker answers.
    const port = Number(new URL(apiUrl!).port);
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const body = { model: 'shared-general-a', messages: [{ role: 'user', content: 'Summarise CVE-2021-44228 for a patch note.' }] };
    const answers = await Promise.all([0, 1, 2, 3].map((i) => post(agent, `${apiUrl}/v1/chat/completions`, demoPat, { ...body, user: `w${i}` })));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
    for (const pid of workers) expect(connectionsHeldBy(pid, port), `worker ${pid} holds some of the connections`).to.be.above(0);
    agent.destroy();
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${adminUrl}/admin/runtime`, { headers: { authorization: `Bearer ${adminToken}` } });
      expect(res.status).to.equal(200);
      await res.arrayBuffer();
    }

    // A worker that dies while serving is replaced; the port keeps answering meanwhile.
    process.kill(workers[0]!, 'SIGKILL');
    await until('a replacement worker', () => {
      const now = childrenOf(run.child.pid!);
      return now.length === 2 && !now.includes(workers[0]!);
    });
    await until('the replacement started', () => (run.err().match(/"event":"gateway.started"/g) ?? []).length === 3);
    expect(run.err()).to.include('"event":"gateway.worker_died"');
    const again = await post(new Agent(), `${apiUrl}/v1/chat/completions`, demoPat, body);
    expect(again.status).to.equal(200);
    // One demo PAT for the whole start (the one the banner shows), not one per worker or replacement.
    const demoPrincipal = /demo principal: (\S+)/.exec(run.out())![1]!;
    const tokens = await fetch(`${adminUrl}/admin/principals/${encodeURIComponent(demoPrincipal)}/tokens`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(((await tokens.json()) as { data: unknown[] }).data).to.have.length(1);

    // SIGTERM to the supervisor: every worker closes and the whole thing exits 0.
    const last = childrenOf(run.child.pid!);
    run.child.kill('SIGTERM');
    const [code] = await once(run.child, 'exit');
    expect(code).to.equal(0);
    for (const pid of last) expect(() => process.kill(pid, 0), `worker ${pid} is gone`).to.throw();
  });

  for (const edit of ['config/gateway.yaml', 'policies/admission/admission.rego'] as const) {
    it(`a worker replaced while a refused edit of ${edit} sits on disk starts on the configuration being served`, async () => {
      const run = start({ PORTCULLIS_WORKERS: '2', REDIS_URL: redis.url, PORTCULLIS_ADMIN_TOKEN: 'workers-operator-token' });
      runs.push(run);
      if (edit.startsWith('policies/')) cpSync(join(REPO, 'policies'), join(run.root, 'policies'), { recursive: true });
      await until('the banner', () => /admin API on \S+/.test(run.out()));
      const [, apiUrl, adminUrl] = /serving the API on (\S+) and the admin API on (\S+)/.exec(run.out())!;
      await until('both workers ready', () => (run.err().match(/"event":"gateway.worker_ready"/g) ?? []).length === 2);
      const pat = /demo PAT \(blue team\): (\S+)/.exec(run.out())![1]!;
      appendFileSync(join(run.root, edit), edit.endsWith('.yaml') ? 'bogusKey: 1\n' : '# an edit not yet built\n');
      const refused = await fetch(`${adminUrl}/admin/reload`, { method: 'POST', headers: { authorization: 'Bearer workers-operator-token' } });
      expect(refused.status).to.equal(422);
      await refused.arrayBuffer();

      const workers = childrenOf(run.child.pid!);
      process.kill(workers[0]!, 'SIGKILL');
      // A worker started under load (tsx compiles on the fly) may take a while: a longer wait than the default.
      await until('the replacement started', () => (run.err().match(/"event":"gateway.started"/g) ?? []).length === 3, 90_000);
      expect(run.err()).to.include('"event":"config.start.last_good"');
      expect(run.err()).to.not.include('gateway.worker_failed_to_start');
      expect(run.child.exitCode, 'the supervisor still runs').to.equal(null);
      for (let i = 0; i < 4; i++) expect((await getFresh(`${apiUrl}/v1/models`, pat)).status).to.equal(200);

      run.child.kill('SIGTERM');
      const [code] = await once(run.child, 'exit');
      expect(code).to.equal(0);
    });
  }

  it("reloads every worker on one admin reload, answering with each one's versions, and /metrics adds every worker up", async () => {
    const run = start({
      PORTCULLIS_WORKERS: '2',
      REDIS_URL: redis.url,
      PORTCULLIS_ADMIN_TOKEN: 'workers-operator-token',
      PORTCULLIS_ROUTE_SHARED_URL: upstream.baseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: upstream.baseUrl,
    });
    runs.push(run);
    const token = 'workers-operator-token';
    await until('the banner', () => /admin API on \S+/.test(run.out()));
    const [, apiUrl, adminUrl] = /serving the API on (\S+) and the admin API on (\S+)/.exec(run.out())!;
    // Ready: serving, and answering the supervisor's reload and metrics requests.
    await until('both workers ready', () => (run.err().match(/"event":"gateway.worker_ready"/g) ?? []).length === 2);
    const workers = childrenOf(run.child.pid!);

    // One admin reload, after an edit: it reaches both workers and says so, worker by worker.
    editFile(run.root, 'rules/rungs.yaml', (t) => t.replace(/^version: .*$/m, 'version: "2099.2.2"'));
    const res = await fetch(`${adminUrl}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    const reload = (await res.json()) as { ok: boolean; workers: Array<{ worker: number; pid: number; ok: boolean; versions: { rules: string } }> };
    expect(res.status, JSON.stringify(reload)).to.equal(200);
    expect(reload.workers.map((w) => w.worker)).to.deep.equal([1, 2]);
    expect(new Set(reload.workers.map((w) => w.pid)).size).to.equal(2);
    for (const w of reload.workers) expect(workers, 'each answer comes from a worker process').to.include(w.pid);
    for (const w of reload.workers) expect([w.ok, w.versions.rules]).to.deep.equal([true, '2099.2.2']);
    // Whichever worker a new connection reaches serves the new rules.
    for (let i = 0; i < 4; i++) {
      const r = await getFresh(`${adminUrl}/admin/runtime`, token);
      expect(JSON.parse(r.text).versions.rules).to.equal('2099.2.2');
    }

    // Six calls on six connections (spread over both workers): every scrape counts all six, whichever worker it reaches.
    const pat = /demo PAT \(blue team\): (\S+)/.exec(run.out())![1]!;
    const body = { model: 'shared-general-a', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] };
    for (let i = 0; i < 6; i++) expect((await post(new Agent(), `${apiUrl}/v1/chat/completions`, pat, body)).status).to.equal(200);
    for (let i = 0; i < 3; i++) {
      const scrape = await getFresh(`${adminUrl}/metrics`, token);
      expect(scrape.status).to.equal(200);
      expect(sumOf(scrape.text, 'portcullis_http_requests_total', ['route="/v1/chat/completions"', 'status="200"'])).to.equal(6);
      // One config series per worker, both on the new rules; the reload applied in each.
      expect(scrape.text.match(/^portcullis_config_info\{[^}]*rules="2099\.2\.2"[^}]*\} 1$/gm)).to.have.length(2);
      expect(sumOf(scrape.text, 'portcullis_config_reloads_total', ['result="applied"'])).to.equal(2);
      expect(sumOf(scrape.text, 'portcullis_config_last_reload_success', [])).to.equal(2);
      expect(scrape.text).to.match(/^portcullis_config_last_reload_timestamp_seconds\{worker="2"\} \d+$/m);
      // A gauge is not added up: an origin up in both workers reads 1, not 2.
      const up = scrape.text.match(/^portcullis_upstream_origin_up\{[^}]*\} \S+$/gm) ?? [];
      expect(up, 'origins are reported').to.not.be.empty;
      for (const line of up) expect(line.endsWith(' 1'), line).to.equal(true);
    }

    run.child.kill('SIGTERM');
    const [code] = await once(run.child, 'exit');
    expect(code).to.equal(0);
  });
});
