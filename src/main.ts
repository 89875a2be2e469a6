/**
 * `npm start`: one gateway on the embedded defaults (or whatever config/ and the environment say), with
 * reload on change or SIGHUP, and a clean stop on SIGINT/SIGTERM. Prints the operator token and a demo PAT
 * on stdout so the README's first curl works.
 */
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { startGateway } from './server.js';
import { HOST_NAMES } from './config/types.js';
import { HOSTS } from './app/hosts.js';
import { createLogger } from './log.js';
import { ConfigError } from './config/documents.js';
import { superviseWorkers } from './workers.js';

const root = resolve(process.env['PORTCULLIS_ROOT'] ?? resolve(dirname(fileURLToPath(import.meta.url)), '..'));
const log = createLogger((process.env['LOG_LEVEL'] as 'info' | undefined) ?? 'info');

try {
  // PORTCULLIS_WORKERS > 1: this process only supervises the workers (src/workers.ts), which run what follows.
  await superviseWorkers({ root, log });
  const gw = await startGateway({ root, log, watch: process.env['PORTCULLIS_WATCH'] !== '0' });
  // Under several workers the supervisor generates the one token they share (src/workers.ts).
  const tokenGenerated = gw.adminTokenGenerated || process.env['PORTCULLIS_ADMIN_TOKEN_GENERATED'] === '1';
  const lines = [
    `portcullis is serving the API on ${gw.apiUrl} and the admin API on ${gw.adminUrl}`,
    // Every listener, with its public origin when that differs from where it is bound.
    ...HOST_NAMES.map((name) => {
      const origin = gw.origins[name];
      const seen = origin === gw.urls[name].replace('127.0.0.1', 'localhost') ? '' : ` (public origin ${origin})`;
      return `  ${`${name}:`.padEnd(9)}${gw.urls[name]}${seen}  ${HOSTS[name].title}`;
    }),
    `  store: ${gw.store.kind}`,
    tokenGenerated
      ? `  operator token (generated; set PORTCULLIS_ADMIN_TOKEN to choose one): ${gw.adminToken}`
      : '  operator token: the one in PORTCULLIS_ADMIN_TOKEN',
  ];
  if (gw.demoToken) {
    lines.push(`  demo principal: ${gw.demoPrincipal}`, `  demo PAT (blue team): ${gw.demoToken}`);
    lines.push('', `  export PAT=${gw.demoToken}${tokenGenerated ? ` PORTCULLIS_ADMIN_TOKEN=${gw.adminToken}` : ''}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  process.on('SIGHUP', () => void gw.holder.reload('SIGHUP'));
  // Once: under workers a Ctrl-C reaches a worker twice (from the terminal and from the supervisor).
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('gateway.stopping', { signal });
    void gw.close().then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  throw err;
}
