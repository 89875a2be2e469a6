/**
 * Starting a gateway: the demo upstream (when a route uses it), the store, the live runtime, and the two
 * listeners (API and admin). main.ts runs one for `npm start`; tests start as many as they need, in-process
 * or as child processes, each on its own ports.
 *
 * Listeners and the store are read at start; a reload swaps everything else (catalog, rules, policy data,
 * guardrails, routes and their pools) without a restart.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { loadConfig } from './config/load.js';
import { RuntimeHolder } from './config/reloader.js';
import { createStore } from './store/index.js';
import { RedisStore } from './store/redis.js';
import { RedisJobStore } from './jobs/redis-store.js';
import { MemoryJobStore } from './jobs/memory-store.js';
import { JobEngine } from './jobs/engine.js';
import { RedisReviewStore } from './reviews/redis-store.js';
import { MemoryReviewStore } from './reviews/memory-store.js';
import { RedisHistoryStore } from './secure/redis-history.js';
import { MemoryHistoryStore } from './secure/memory-history.js';
import { HistoryRecorder } from './secure/recorder.js';
import { StoreConflict, type Store } from './store/store.js';
import { createMeter, type Meter } from './metering/index.js';
import { loadReceiptSigner } from './receipts/signing.js';
import { startDemoUpstream, type DemoUpstream } from './upstream/demo.js';
import { createApiApp } from './app/api.js';
import { createAdminApp } from './app/admin.js';
import { createPrincipal, issueToken, principalId } from './auth/principals.js';
import type { Logger } from './log.js';
import { createListener } from './http/listener.js';

export interface GatewayOptions {
  /** Folder holding catalog/, rules/ and config/. */
  root: string;
  env?: Record<string, string | undefined>;
  log: Logger;
  /** Watch the configuration folders and reload on change. */
  watch?: boolean;
  /** The meter's clock (epoch ms): which UTC day a call counts on, when reservations expire. For tests. */
  now?: () => number;
}

export interface Gateway {
  apiUrl: string;
  adminUrl: string;
  adminToken: string;
  /** True when the operator token was generated here rather than read from PORTCULLIS_ADMIN_TOKEN. */
  adminTokenGenerated: boolean;
  /** A fresh PAT for the demo blue-team principal, when demo.bootstrap is on. */
  demoToken: string | null;
  demoPrincipal: string | null;
  store: Store;
  holder: RuntimeHolder;
  meter: Meter;
  engine: JobEngine;
  close(): Promise<void>;
}

async function listen(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  return `http://${host}:${addr.port}`;
}

async function bootstrapDemo(store: Store, holder: RuntimeHolder): Promise<{ principal: string; token: string }> {
  const runtime = holder.current;
  const id = principalId(runtime.gateway.principalDomain, 'demo');
  try {
    await createPrincipal(store, runtime, { tenant: 'demo', username: 'demo' });
  } catch (err) {
    if (!(err instanceof StoreConflict) && (err as { code?: string }).code !== 'principal-exists') throw err;
  }
  const { token } = await issueToken(store, id, `demo (start-up ${new Date().toISOString()})`);
  return { principal: id, token };
}

export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const env = opts.env ?? process.env;
  const first = loadConfig(opts.root, env);
  const cfg = first.gateway.data;
  const usesDemo = Object.values(cfg.routes).some((r) => 'demo' in r.origin);
  const demo: DemoUpstream | null = usesDemo ? await startDemoUpstream() : null;
  const holder = await RuntimeHolder.start(opts.root, { env, ...(demo ? { demoBaseUrl: demo.baseUrl } : {}) }, opts.log);
  const store = await createStore(
    cfg.store.kind === 'redis' ? { kind: 'redis', url: cfg.store.url, ...(cfg.store.prefix ? { keyPrefix: cfg.store.prefix } : {}) } : cfg.store,
  );
  // Receipts are signed with the configured key (read at start), or an ephemeral one with a warning.
  const signer = loadReceiptSigner({ root: opts.root, keyFile: cfg.receipts?.keyFile, env, log: opts.log });
  const meter = createMeter(store, { signer, ...(opts.now ? { now: opts.now } : {}) });
  meter.start();
  // Jobs live beside the store: in Redis on its connection, or in this process with the memory store.
  const jobs = store instanceof RedisStore ? new RedisJobStore(store) : new MemoryJobStore();
  const engine = new JobEngine(jobs, store, meter, opts.log, () => holder.current.jobs);
  engine.start();
  // The review list and the version history live beside the store the same way.
  const reviews = store instanceof RedisStore ? new RedisReviewStore(store) : new MemoryReviewStore();
  const history = new HistoryRecorder(store instanceof RedisStore ? new RedisHistoryStore(store) : new MemoryHistoryStore(), opts.log);
  await history.wentLive(holder.current);
  holder.onSwap((next) => void history.wentLive(next));
  const deps = { store, holder, meter, log: opts.log, jobs, engine, reviews, history };
  const adminToken = env['PORTCULLIS_ADMIN_TOKEN'] || `pcl_admin_${randomBytes(24).toString('base64url')}`;

  // Every listener gets the same bounds (src/http/listener.ts); the request timeout times only the receiving
  // of a request, so the 14-minute synchronous wait is not cut by it.
  const api = createListener(createApiApp(deps), { name: 'api', bounds: cfg.http, log: opts.log });
  const admin = createListener(createAdminApp(deps, adminToken), { name: 'admin', bounds: cfg.http, log: opts.log });
  const apiUrl = await listen(api, cfg.listeners.api.host, cfg.listeners.api.port);
  const adminUrl = await listen(admin, cfg.listeners.admin.host, cfg.listeners.admin.port);
  if (opts.watch) holder.watch();

  const boot = cfg.demo?.bootstrap ? await bootstrapDemo(store, holder) : null;
  opts.log.info('gateway.started', { api: apiUrl, admin: adminUrl, store: store.kind, versions: holder.current.versions, demoUpstream: demo?.baseUrl ?? null });

  return {
    apiUrl,
    adminUrl,
    adminToken,
    adminTokenGenerated: !env['PORTCULLIS_ADMIN_TOKEN'],
    demoToken: boot?.token ?? null,
    demoPrincipal: boot?.principal ?? null,
    store,
    holder,
    meter,
    engine,
    async close() {
      await engine.close();
      api.closeAllConnections();
      admin.closeAllConnections();
      await Promise.all([new Promise((r) => api.close(r)), new Promise((r) => admin.close(r))]);
      await holder.close();
      await meter.close();
      await store.close();
      await demo?.close();
    },
  };
}
