/**
 * The host registry: which Koa app each listener of `config/gateway.yaml` serves. server.ts walks this
 * table and nothing else, so a new host is one line here and one composition file beside it.
 */
import type Koa from 'koa';
import type { Server } from 'node:http';
import type { HostName } from '../config/types.js';
import type { Deps } from './deps.js';
import type { Operator } from './operators.js';
import type { Front } from './host-app.js';
import { createApiApp } from './api.js';
import { createAuthApp } from './auth.js';
import { createConsoleApp } from './console.js';
import { createSiteApp } from './site.js';
import { createGraphApp } from './graph.js';
import { createAdminApp } from './admin.js';

/** What a host's app is built with besides the deps: its listener's front, the operator tokens, the apps built before it. */
export interface HostContext {
  front: Front;
  adminToken: string;
  operators: Operator[];
  /** The apps of the hosts before this one in HOST_NAMES order (the site's MCP tools run through the API app). */
  built: Partial<Record<HostName, Koa>>;
}

export interface HostSpec {
  /** What `npm start` prints beside the listener's address. */
  title: string;
  create(deps: Deps, host: HostContext): Koa;
  /** Server settings a host needs beyond Node's defaults. */
  tune?(server: Server): void;
}

export const HOSTS: Record<HostName, HostSpec> = {
  api: {
    title: 'API',
    // No tuning: the request timeout of src/http/listener.ts times only the receiving of a request, so the
    // 14-minute synchronous wait is not cut by it (and requestTimeout = 0 left stalled bodies open forever).
    create: (deps, { front }) => createApiApp(deps, front),
  },
  auth: { title: 'sign-in', create: (deps, { front }) => createAuthApp(deps, front) },
  console: { title: 'console', create: (deps, { front }) => createConsoleApp(deps, front) },
  site: {
    title: 'site',
    create: (deps, { front, built }) => {
      if (!built.api) throw new Error('the site host is built after the API host (HOST_NAMES order)');
      return createSiteApp(deps, front, built.api);
    },
    tune(server) {
      // svc_chat_completion over MCP waits as long as the API route does (14 minutes).
      server.requestTimeout = 0;
      server.keepAliveTimeout = 65_000;
    },
  },
  graph: { title: 'graph MCP', create: (deps, { front }) => createGraphApp(deps, front) },
  admin: { title: 'admin API', create: (deps, { front, adminToken, operators }) => createAdminApp(deps, front, adminToken, operators) },
};
