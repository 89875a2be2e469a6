/**
 * `npm start`: one gateway on the embedded defaults (or whatever config/ and the environment say), with
 * reload on change or SIGHUP, and a clean stop on SIGINT/SIGTERM. Prints the operator token and a demo PAT
 * on stdout so the README's first curl works.
 */
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { HOST_NAMES } from './config/types.js';
import { createLogger, isLevel } from './log.js';
import { ConfigError } from './config/documents.js';
import { ListenError } from './http/listener.js';
import { StoreRefused } from './store/errors.js';
import { startTracing, stopTracing } from './observe/tracing.js';
import cluster from 'node:cluster';
import { superviseWorkers } from './workers.js';
import { Services } from './app/services.js';
import { setHeapGrowth, settleHeap, trimSeconds } from './heap.js';
import { LocalDataError, prepareLocalData, type LocalData } from './local-data/index.js';
import { logTarget } from './local-data/log-file.js';

setHeapGrowth();

const root = resolve(process.env['PORTCULLIS_ROOT'] ?? resolve(dirname(fileURLToPath(import.meta.url)), '..'));
const level = process.env['LOG_LEVEL'];
// At a terminal the log goes to a file, so the banner stays on screen (src/local-data/log-file.ts).
const logs = logTarget(root, process.env, process.stderr.isTTY === true);
const log = createLogger(isLevel(level) ? level : 'info', logs.write ?? undefined);

// The process's parts, started in order and stopped in reverse (src/app/services.ts): tracing, the local data
// (its redis-server), then the gateway, which itself is a list of the same kind.
const services = new Services();

try {
  const trimEvery = trimSeconds();
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set (src/observe/tracing.ts).
  await services.start({
    name: 'tracing',
    start: async () => {
      if (await startTracing()) log.info('tracing.started', { exporter: 'otlp' });
    },
    stop: () => stopTracing(),
  });
  // State that outlives a restart (src/local-data): the redis-server npm start runs itself, or a one-line
  // warning that it could not. Only the first process does this; workers inherit what it put in the env.
  // It stops once the gateway's store has closed its connection.
  const local: LocalData | null = cluster.isWorker
    ? null
    : await services.start({ name: 'local data', start: () => prepareLocalData(root), stop: (l) => l.stop() });
  if (local?.warning) process.stderr.write(`${local.warning}\n`);
  process.on('exit', () => void local?.stop());
  // PORTCULLIS_WORKERS > 1: this process only supervises the workers (src/workers.ts), which run what follows.
  // The supervisor is a part of the list: a stop stops the workers first, then the local data they used.
  const workers = await services.start({ name: 'workers', start: () => superviseWorkers({ root, log }), stop: (w) => w?.stop() });
  if (workers) {
    // Once every worker is gone (stopped by a signal, or none could start: the code says which), what was
    // started before them stops too, and the process exits with that code.
    void workers.done.then((code) =>
      services.stop().then(
        () => process.exit(code),
        () => process.exit(1),
      ),
    );
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void workers.stop(signal));
    await new Promise<never>(() => undefined);
  }
  // Imported only by a process that serves: a supervisor of several workers never gets here, and without
  // the gateway's modules (every host, the policy engine, Redis) it stays a fraction of a worker's RSS.
  const [{ startGateway }, { HOSTS }] = await Promise.all([import('./server.js'), import('./app/hosts.js')]);
  // A graceful stop (readiness false, in-flight calls finish within shutdown.graceMs, the store closes last).
  const gw = await services.start({
    name: 'gateway',
    start: () => startGateway({ root, log, watch: process.env['PORTCULLIS_WATCH'] !== '0' }),
    stop: (g) => g.shutdown(),
  });
  settleHeap();
  // malloc's free holes back to the system now and on an unref'd timer (src/malloc-trim.ts).
  const [{ loadBinding, loadTrim, startTrimmer }, { loadUnmap, releaseStartPages }] = await Promise.all([
    import('./malloc-trim.js'),
    import('./start-pages.js'),
  ]);
  const binding = loadBinding();
  startTrimmer(trimEvery, loadTrim(binding));
  // The executable's pages only start-up used, out of this process's RSS, last, once it serves (src/start-pages.ts).
  releaseStartPages(loadUnmap(binding));
  // Under several workers the supervisor generates the one token they share (src/workers.ts).
  const tokenGenerated = gw.adminTokenGenerated || process.env['PORTCULLIS_ADMIN_TOKEN_GENERATED'] === '1';
  const lines = [
    `portcullis is serving the API on ${gw.apiUrl} and the admin API on ${gw.adminUrl}`,
    // Every listener at its public origin (http://localhost:<port> by default), the one address that works
    // from a browser too: the session cookie, CORS and the passkey relying party are bound to it, not to the
    // bound address 127.0.0.1. Where a configured origin differs from where it listens, both are shown.
    ...HOST_NAMES.map((name) => {
      const origin = gw.origins[name];
      const bound = origin === gw.urls[name].replace('127.0.0.1', 'localhost') ? '' : ` (listening on ${gw.urls[name]})`;
      const open = name === 'console' ? ' (open it in a browser)' : '';
      return `  ${`${name}:`.padEnd(9)}${origin}${bound}  ${HOSTS[name].title}${open}`;
    }),
    `  store: ${local?.summary ?? gw.store.kind}`,
    ...(logs.file ? [`  log: ${logs.file} (PORTCULLIS_LOG_FILE=- keeps it on stderr)`] : []),
    tokenGenerated
      ? `  operator token (generated; set PORTCULLIS_ADMIN_TOKEN to choose one): ${gw.adminToken}`
      : '  operator token: the one in PORTCULLIS_ADMIN_TOKEN',
  ];
  if (gw.demoToken) lines.push(`  demo principal: ${gw.demoPrincipal}`, `  demo PAT (blue team): ${gw.demoToken}`);
  // Everything the README's curls and the CLI need, in one line to paste into another shell.
  const exports = [
    ...(gw.demoToken ? [`PAT=${gw.demoToken}`, `PRINCIPAL=${gw.demoPrincipal}`] : []),
    // Where the CLI finds the hosts it speaks to when the ports are not the defaults (PORTCULLIS_PORT_BASE).
    `PORTCULLIS_API_URL=${gw.origins.api}`,
    `PORTCULLIS_AUTH_URL=${gw.origins.auth}`,
    `PORTCULLIS_ADMIN_URL=${gw.adminUrl}`,
    ...(tokenGenerated ? [`PORTCULLIS_ADMIN_TOKEN=${gw.adminToken}`] : []),
  ];
  lines.push('', `  export ${exports.join(' ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  process.on('SIGHUP', () => void gw.holder.reload('SIGHUP'));
  // Under PORTCULLIS_WORKERS: reloads asked by the supervisor for an admin reload, and metrics scrapes.
  (await import('./worker-link.js')).answerSupervisor((reason) => gw.holder.reload(reason));
  // SIGTERM or SIGINT: a graceful stop (readiness false, in-flight calls finish within shutdown.graceMs, the
  // store closes last). A second signal stops at once, except in a worker: there a Ctrl-C arrives twice (from
  // the terminal and from the supervisor), and the supervisor kills a worker that overstays its grace.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping && cluster.isWorker) return;
    if (stopping) {
      log.warn('gateway.stopping_now', { signal });
      void gw.close().then(() => process.exit(0));
      return;
    }
    stopping = true;
    log.info('gateway.stopping', { signal });
    void services.stop().then(
      () => process.exit(0),
      (err: Error) => {
        log.error('gateway.stop_failed', { error: err.name });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  if (err instanceof StoreRefused) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78); // EX_CONFIG: a different Redis or store setting is the fix
  }
  if (err instanceof LocalDataError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(75); // EX_TEMPFAIL
  }
  if (err instanceof ListenError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(69); // EX_UNAVAILABLE
  }
  throw err;
}
