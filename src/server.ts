/**
 * Starting a gateway: the demo upstream (when a route uses it), the store, the live runtime, and one
 * listener per host of `config/gateway.yaml` (the registry in app/hosts.ts says what each serves). main.ts runs one for `npm start`; tests start as many as they need, in-process
 * or as child processes, each on its own ports.
 *
 * Listeners and the store are read at start; a reload swaps everything else (catalog, rules, policy data,
 * guardrails, routes and their pools) without a restart. Every long-lived part is started through one list
 * (app/services.ts) and stopped in reverse by `close`.
 */
import type { Server } from 'node:http';
import type Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { loadConfig } from './config/load.js';
import { RuntimeHolder } from './config/reloader.js';
import { HOST_NAMES, type HostName } from './config/types.js';
import { createStore } from './store/index.js';
import { JobEngine } from './jobs/engine.js';
import { HistoryRecorder } from './secure/recorder.js';
import { Decisions } from './decisions/service.js';
import { impactReportProblem } from './decisions/reload-gate.js';
import { stripeFromEnv } from './billing/stripe.js';
import { oidcFromEnv } from './identity-links/provider.js';
import { StoreConflict, type Store } from './store/store.js';
import type { Meter } from './metering/index.js';
import { loadReceiptKey } from './receipts/key.js';
import { createReceipts, type Receipts } from './receipts/service.js';
import { startDemoUpstream, type DemoUpstream } from './upstream/demo.js';
import { wireCapabilities, type Capabilities } from './app/wire.js';
import { loadDataKeyring } from './data-key/load.js';
import { Sessions } from './sessions/sessions.js';
import { UsageRecorder } from './token-usage/store.js';
import { HOSTS } from './app/hosts.js';
import { Services } from './app/services.js';
import { operatorsFrom } from './app/operators.js';
import type { Deps } from './app/deps.js';
import { createPrincipal, issueToken, principalId } from './auth/principals.js';
import type { Logger } from './log.js';
import { createListener, ListenError, type Listener } from './http/listener.js';
import { Lifecycle } from './http/lifecycle.js';
import { drain } from './http/shutdown.js';
import { limitFailedAuth } from './ratelimit/middleware.js';
import { metrics, observeReload, observeVersions, pingStore } from './observe/metrics.js';
import { workerIndex } from './worker-link.js';
import { lastGoodRoot, saveLastGood } from './config/last-good.js';
import { ConfigError } from './config/documents.js';
import { scrapeCheck } from './http/health.js';

export interface GatewayOptions {
  /** Folder holding catalog/, rules/ and config/. */
  root: string;
  env?: Record<string, string | undefined>;
  log: Logger;
  /** Watch the configuration folders and reload on change. */
  watch?: boolean;
  /**
   * The gateway's clock (epoch ms): which UTC day a call counts on, when reservations expire, when sessions,
   * challenges and recovery delays end, and the clock job leases are stamped on (Redis judges them on its
   * own). For tests.
   */
  now?: () => number;
}

export interface Gateway {
  apiUrl: string;
  adminUrl: string;
  /** Where each listener is bound (http://<host>:<port>), for clients on this machine. */
  urls: Record<HostName, string>;
  /** Each host's public origin (`listeners.<name>.url`, or http://localhost:<bound port>). */
  origins: Record<HostName, string>;
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
  /** Where the process is in its life (draining after SIGTERM) and the requests in flight. */
  lifecycle: Lifecycle;
  /** The app each listener serves (the OpenAPI test reads the API app's routes). */
  apps: Record<HostName, Koa>;
  /** Graceful stop (SIGTERM): drain, give in-flight work `shutdown.graceMs`, then close. */
  shutdown(): Promise<void>;
  /** Sign-in sessions (src/sessions), for tests and embedders. */
  sessions: Sessions;
  /** The receipt log and its signer. */
  receipts: Receipts;
  /** TOTP enrolments, sealed with the data key: an operator's rewrap goes through here. */
  totp: Capabilities['totp'];
  /** Immediate stop: running jobs are interrupted, connections cut. */
  close(): Promise<void>;
}

async function listen(server: Server, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
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
  // Every long-lived part is started in order and stopped in reverse (src/app/services.ts); a start that
  // fails part way stops what had started.
  const services = new Services();
  try {
    return await assemble(opts, services);
  } catch (err) {
    await services.stop().catch(() => {});
    throw err;
  }
}

async function assemble(opts: GatewayOptions, services: Services): Promise<Gateway> {
  const env = opts.env ?? process.env;
  // Under PORTCULLIS_WORKERS, a worker whose root is refused at start (an edit the running workers refused)
  // serves the last good copy the supervisor keeps instead (src/config/last-good.ts); reloads read the root.
  const lastGoodDir = env['PORTCULLIS_LAST_GOOD_DIR'];
  let from = opts.root;
  let first: ReturnType<typeof loadConfig>;
  try {
    first = loadConfig(opts.root, env);
  } catch (err) {
    const fallback = err instanceof ConfigError ? lastGoodRoot(lastGoodDir) : null;
    if (!fallback) throw err;
    opts.log.warn('config.start.last_good', {
      problems: (err as ConfigError).problems,
      note: 'the files on disk are refused; serving the last good configuration of the running workers',
    });
    from = fallback;
    first = loadConfig(from, env);
  }
  const cfg = first.gateway.data;
  const adminToken = env['PORTCULLIS_ADMIN_TOKEN'] || `pcl_admin_${randomBytes(24).toString('base64url')}`;
  // Named operator tokens with scopes (admin.operators), read at start; refused when a token is not set,
  // before anything starts, so a refused start leaves nothing running.
  const operators = operatorsFrom(cfg, env, adminToken, first.gateway.file);
  const usesDemo = Object.values(cfg.routes).some((r) => r.origin !== undefined && 'demo' in r.origin);
  const demo: DemoUpstream | null = usesDemo ? await services.start({ name: 'demo upstream', start: startDemoUpstream, stop: (d) => d.close() }) : null;
  const compileOptions = { env, ...(demo ? { demoBaseUrl: demo.baseUrl } : {}) };
  const holder = await services.start({
    name: 'runtime',
    start: async () => {
      try {
        return await RuntimeHolder.start(opts.root, compileOptions, opts.log, from);
      } catch (err) {
        const fallback = err instanceof ConfigError && from === opts.root ? lastGoodRoot(lastGoodDir) : null;
        if (!fallback) throw err;
        opts.log.warn('config.start.last_good', {
          problems: (err as ConfigError).problems,
          note: 'the files on disk are refused; serving the last good configuration of the running workers',
        });
        from = fallback;
        return await RuntimeHolder.start(opts.root, compileOptions, opts.log, from);
      }
    },
    stop: (h) => h.close(),
  });
  if (lastGoodDir) {
    if (from === opts.root) saveLastGood(lastGoodDir, opts.root, holder.current, env);
    holder.onSwap((next) => saveLastGood(lastGoodDir, opts.root, next, env));
  }
  const store = await services.start({
    name: 'store',
    start: () =>
      createStore(
        cfg.store.kind === 'redis'
          ? {
              kind: 'redis',
              ...(cfg.store.url ? { url: cfg.store.url } : {}),
              ...(cfg.store.nodes ? { clusterNodes: cfg.store.nodes } : {}),
              ...(cfg.store.prefix ? { keyPrefix: cfg.store.prefix } : {}),
              ...(cfg.store.replicaAcks !== undefined ? { replicaAcks: cfg.store.replicaAcks } : {}),
              ...(cfg.store.replicaAckTimeoutMs ? { replicaAckTimeoutMs: cfg.store.replicaAckTimeoutMs } : {}),
              ...(cfg.store.identityCacheEntries !== undefined ? { identityCacheEntries: cfg.store.identityCacheEntries } : {}),
              onIdentityTracking: (event: 'lost' | 'restored', reason?: string) => {
                if (event === 'lost') {
                  opts.log.warn('store.identity_tracking.lost', {
                    reason,
                    note: 'identity cache dropped; calls answer 503 store-unavailable until the tracking connection is back',
                  });
                } else opts.log.info('store.identity_tracking.restored', { note: 'tracking on again; identity records are read afresh' });
              },
              onReplicaShortfall: (confirmed: number, wanted: number) => {
                metrics.replicaShortfalls.inc();
                opts.log.warn('store.replicas.unconfirmed', {
                  confirmed,
                  wanted,
                  note: 'a money write stands on the master only: replicas did not confirm it in time',
                });
              },
            }
          : cfg.store,
      ),
    stop: (s) => s.close(),
  });
  // Receipts are leaves of one log per deployment; its checkpoints are signed with the configured key (read
  // at start), or an ephemeral one with a warning, by whichever gateway holds the signing lease.
  const key = loadReceiptKey({ root: opts.root, keyFile: cfg.receipts?.keyFile, env, log: opts.log });
  // Capabilities with state beside the store: in Redis on its connection, or in this process (app/wire.ts).
  // Secrets the server must read back (TOTP) are sealed at rest with the data key (src/data-key).
  const dataKey = loadDataKeyring({ env, log: opts.log });
  const wired = wireCapabilities(store, { dataKey, log: opts.log, ...(opts.now ? { now: opts.now } : {}) });
  const receipts = await services.start({
    name: 'receipt log',
    start: () => {
      const r = createReceipts(store, wired.receiptLog, key, cfg, opts.log);
      r.start();
      return r;
    },
    stop: (r) => r.close(),
  });
  const meter = await services.start({
    name: 'meter',
    start: () => {
      wired.meter.start();
      return wired.meter;
    },
    stop: (m) => m.close(),
  });
  const { jobs, reviews } = wired;
  // Started once the listeners are bound (below).
  const engine = new JobEngine(jobs, meter, opts.log, () => holder.current.jobs, opts.now);
  const history = new HistoryRecorder(wired.history, opts.log);
  await history.wentLive(holder.current);
  holder.onSwap((next) => void history.wentLive(next));
  // Decision records and the content of every version a receipt may name (src/decisions).
  const decisions = new Decisions(wired.decisions, opts.log, opts.now ?? Date.now);
  await decisions.keep(holder.current);
  holder.onSwap((next) => void decisions.keep(next));
  // policy.requireImpactReport holds every reload, the file watcher's and SIGHUP's too.
  holder.gate((current, next) => impactReportProblem(decisions.store, current, next));
  // What /metrics says of the configuration: the versions served, and each reload's result and time.
  observeVersions(workerIndex(), holder.current.versions);
  holder.onSwap((next) => observeVersions(workerIndex(), next.versions));
  holder.onReload((_result, record) => observeReload(workerIndex(), record.ok, record.at));

  // Bind every listener first (port 0 picks a free one), then work out the public origins from the ports
  // actually bound, then build the apps, which need the origins (cookies, the passkey relying party).
  // Each listener is hardened the same way (src/http/listener.ts: timeouts, head limits, connection cap).
  const listeners = {} as Record<HostName, Listener>;
  const lifecycle = new Lifecycle();
  const probe = async () => ({
    runtime: holder.current !== undefined,
    policy: holder.current?.policy !== undefined,
    store: await Promise.race([pingStore(() => store.ping()), new Promise<boolean>((r) => setTimeout(() => r(false), 1_000).unref())]),
    serving: !lifecycle.draining,
  });
  // /metrics takes the operator token, or the scrape token whose SHA-256 the configuration names.
  const mayScrape = scrapeCheck(adminToken, () => holder.current.gateway.metrics?.scrapeTokenSha256);
  const servers = {} as Record<HostName, Server>;
  const urls = {} as Record<HostName, string>;
  const origins = {} as Record<HostName, string>;
  await services.start({
    name: 'listeners',
    start: async () => {
      try {
        for (const name of HOST_NAMES) {
          listeners[name] = createListener({ name, bounds: cfg.http, log: opts.log, lifecycle, probe, metrics: name === 'admin', mayScrape });
          const server = listeners[name].server;
          HOSTS[name].tune?.(server);
          servers[name] = server;
          const { host, port, url } = cfg.listeners[name];
          const bound = await listen(server, host, port).catch((err: NodeJS.ErrnoException) => {
            throw new ListenError(name, host, port, err);
          });
          urls[name] = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
          origins[name] = url ?? `http://localhost:${bound}`;
        }
      } catch (err) {
        for (const server of Object.values(servers)) server.close();
        throw err;
      }
    },
    stop: async () => {
      for (const server of Object.values(servers)) server.closeAllConnections();
      await Promise.all(Object.values(servers).map((server) => new Promise((r) => server.close(r))));
    },
  });
  // The job engine: started once every listener is bound, so it is the first part stopped, before any
  // connection is cut: the jobs it interrupts still answer their callers (503 job-interrupted).
  await services.start({
    name: 'job engine',
    start: () => engine.start(),
    stop: () => engine.close(),
  });
  const now = opts.now ?? Date.now;
  const sessions = new Sessions(wired.sessions, holder, origins, now);
  // A principal with TOTP enrolled owes a code after every primary sign-in.
  sessions.requireSecondFactorWhen(async (pid) => (await wired.totp.get(pid))?.state === 'active');
  // The owner signing in, or using a session, ends a recovery under way and leaves them a notice of it.
  sessions.onOwnerActs(async (pid, how) => {
    const cancelled = await wired.recovery.cancel(pid, how, now());
    if (cancelled) opts.log.info('recovery.cancelled', { principal: pid, recovery: cancelled.id, by: how });
    return cancelled !== null;
  });
  // Stripe only when a key is configured; without one the billing routes that need it answer 503.
  const stripe = await stripeFromEnv(env);
  const deps: Deps = {
    store,
    holder,
    meter,
    log: opts.log,
    jobs,
    engine,
    reviews,
    history,
    origins,
    sessions,
    now,
    challenges: wired.challenges,
    passkeys: wired.passkeys,
    totp: wired.totp,
    recovery: wired.recovery,
    tokenUsage: new UsageRecorder(wired.tokenUsage),
    billing: wired.billing,
    stripe,
    receipts,
    walletAccounts: wired.walletAccounts,
    limiter: wired.limiter,
    identityLinks: wired.identityLinks,
    oidc: oidcFromEnv(env),
    decisions,
  };
  // Failed credentials are limited per client address on every listener (src/ratelimit/middleware.ts).
  const failedAuth = limitFailedAuth(deps.limiter, holder);
  // Each host's app begins with its listener's front and the failed-authentication limit (src/app/host-app.ts).
  const built: Partial<Record<HostName, Koa>> = {};
  for (const name of HOST_NAMES) {
    built[name] = HOSTS[name].create(deps, { front: [...listeners[name].front, failedAuth], adminToken, operators, built });
    listeners[name].serve(built[name]);
  }
  if (opts.watch) holder.watch();

  // Under PORTCULLIS_WORKERS the supervisor lets only the first worker's first start bootstrap the demo (the
  // one whose banner is shown): the others, and replacements, would each mint a PAT nobody sees.
  const boot = cfg.demo?.bootstrap && env['PORTCULLIS_DEMO_BOOTSTRAP'] !== '0' ? await bootstrapDemo(store, holder) : null;
  if (env['PORTCULLIS_INTENT_MODEL'] === 'off')
    opts.log.warn('guard.intent-model.off', { note: 'PORTCULLIS_INTENT_MODEL=off: the word scorer alone decides the intent block rules' });
  opts.log.info('gateway.started', { ...urls, store: store.kind, versions: holder.current.versions, demoUpstream: demo?.baseUrl ?? null });

  const gateway: Gateway = {
    apiUrl: urls.api,
    adminUrl: urls.admin,
    urls,
    origins,
    adminToken,
    adminTokenGenerated: !env['PORTCULLIS_ADMIN_TOKEN'],
    demoToken: boot?.token ?? null,
    demoPrincipal: boot?.principal ?? null,
    store,
    holder,
    meter,
    engine,
    lifecycle,
    apps: Object.fromEntries(HOST_NAMES.map((name) => [name, listeners[name].app!])) as Record<HostName, Koa>,
    async shutdown() {
      // Readiness false, listeners closed, in-flight work given its grace (src/http/shutdown.ts); then stop.
      await drain({ lifecycle, servers: Object.values(servers), jobsIdle: (ms) => engine.idle(ms), log: opts.log }, cfg.shutdown);
      await engine.close();
      await lifecycle.idle(1_000); // the answers of jobs stopped just now are written before connections close
      await gateway.close();
    },
    sessions,
    receipts,
    totp: wired.totp,
    async close() {
      // In reverse of their start: the job engine, the listeners, the meter, the receipt log, the store, the
      // runtime (its upstream pools), the demo upstream.
      await services.stop();
    },
  };
  return gateway;
}
