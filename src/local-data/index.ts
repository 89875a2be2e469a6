/**
 * `npm start`'s local state: what makes a gateway on a developer's machine keep its accounts, tokens and
 * receipts across a restart without anyone configuring a store.
 *
 * When no store is configured (no REDIS_URL, no REDIS_CLUSTER_NODES, `store.kind: memory` in
 * config/gateway.yaml) and PORTCULLIS_STORE is not `memory`, the gateway runs its own redis-server with its
 * data in the data folder (PORTCULLIS_DATA_DIR, default `.portcullis/data` under the root) and points
 * REDIS_URL at it. The keys a start would otherwise generate afresh are kept there too: the receipt log's
 * signing key (receipt-key.pem), the data key that seals secrets at rest (data.key) and the operator token
 * (admin-token), each mode 0600.
 *
 * Where redis-server is not installed, the gateway falls back to the memory store and says so in one line,
 * with the command that installs it. Everything here runs in the process `npm start` started (the
 * supervisor, under several workers), before any gateway; the workers inherit the environment it sets.
 */
import { newDataKey } from '../data-key/keyring.js';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '../config/load.js';
import { alive, ManagedRedisError, redisServerAvailable, startManagedRedis } from './redis-server.js';

type Env = Record<string, string | undefined>;

export const INSTALL_REDIS = 'sudo apt-get install -y redis-server; on macOS: brew install redis';

export interface LocalData {
  /** What the banner says about where state lives. */
  readonly summary: string;
  /** A warning for stderr, when state will not survive a stop. */
  readonly warning: string | null;
  /** Stops what was started here (the managed redis-server), after the gateway closed its store. */
  stop(): Promise<void>;
}

export class LocalDataError extends Error {}

export function dataDir(root: string, env: Env): string {
  return resolve(root, env['PORTCULLIS_DATA_DIR'] || join('.portcullis', 'data'));
}

/** One gateway per data folder: a second would stop the first one's redis-server as an orphan. */
function lock(dir: string): () => void {
  const path = join(dir, 'portcullis.pid');
  if (existsSync(path)) {
    const pid = Number(readFileSync(path, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new LocalDataError(
        `portcullis: another portcullis (pid ${pid}) is using the data folder ${dir}; stop it, or give this one its own folder with PORTCULLIS_DATA_DIR`,
      );
    }
  }
  writeFileSync(path, `${process.pid}\n`);
  const release = () => {
    if (existsSync(path) && readFileSync(path, 'utf8').trim() === String(process.pid)) rmSync(path, { force: true });
  };
  process.on('exit', release);
  return release;
}

/** A secret kept in the data folder: read if there, else made once and written with mode 0600. */
function kept(path: string, make: () => string): void {
  if (!existsSync(path)) writeFileSync(path, make(), { mode: 0o600 });
}

export async function prepareLocalData(root: string, env: Env = process.env): Promise<LocalData> {
  const configured = env['REDIS_URL'] || env['REDIS_CLUSTER_NODES'] !== undefined || loadConfig(root, env).gateway.data.store.kind !== 'memory';
  if (configured) return { summary: 'redis (configured)', warning: null, stop: async () => {} };
  const dir = dataDir(root, env);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    // A read-only root (a container image, a packaged install): nothing can be kept here, so say so and run
    // on memory, rather than failing to start.
    const why = (err as NodeJS.ErrnoException).code ?? 'unwritable';
    return {
      summary: `memory (the data folder ${dir} cannot be created: ${why}; forgotten when this process stops)`,
      warning: `portcullis: cannot create the data folder ${dir} (${why}), so state is kept in memory and lost when this process stops; set PORTCULLIS_DATA_DIR to a writable folder, or REDIS_URL`,
      stop: async () => {},
    };
  }
  const release = lock(dir);

  // Keys that would otherwise change at every start, unless the operator chose them.
  const receipts = loadConfig(root, env).gateway.data.receipts;
  if (!env['PORTCULLIS_RECEIPT_KEY'] && !env['PORTCULLIS_RECEIPT_KEY_FILE'] && !receipts?.keyFile) {
    const path = join(dir, 'receipt-key.pem');
    kept(path, () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    env['PORTCULLIS_RECEIPT_KEY_FILE'] = path;
  }
  if (!env['PORTCULLIS_DATA_KEY'] && !env['PORTCULLIS_DATA_KEY_FILE']) {
    const path = join(dir, 'data.key');
    kept(path, () => `${newDataKey()}\n`);
    env['PORTCULLIS_DATA_KEY_FILE'] = path;
  }
  if (!env['PORTCULLIS_ADMIN_TOKEN']) {
    const path = join(dir, 'admin-token');
    kept(path, () => `pcl_admin_${randomBytes(24).toString('base64url')}\n`);
    env['PORTCULLIS_ADMIN_TOKEN'] = readFileSync(path, 'utf8').trim();
    env['PORTCULLIS_ADMIN_TOKEN_GENERATED'] = '1';
  }

  if (env['PORTCULLIS_STORE'] === 'memory') {
    return { summary: 'memory (PORTCULLIS_STORE=memory: forgotten when this process stops)', warning: null, stop: async () => release() };
  }
  if (!redisServerAvailable()) {
    return {
      summary: 'memory (redis-server not installed: forgotten when this process stops)',
      warning: `portcullis: redis-server is not installed, so accounts, tokens and receipts are kept in memory and lost when this process stops; to keep them, install it (${INSTALL_REDIS}) and start again`,
      stop: async () => release(),
    };
  }
  try {
    const redis = await startManagedRedis(dir);
    env['REDIS_URL'] = redis.url;
    return {
      summary: `redis-server run by portcullis, data in ${dir} (kept across restarts)`,
      warning: null,
      async stop() {
        await redis.stop();
        release();
      },
    };
  } catch (err) {
    release();
    if (err instanceof ManagedRedisError) throw new LocalDataError(`portcullis: ${err.message}`);
    throw err;
  }
}
