/**
 * The host registry: which Koa app each listener of `config/gateway.yaml` serves. server.ts walks this
 * table and nothing else, so a new host is one line here and one composition file beside it.
 */
import type Koa from 'koa';
import type { Server } from 'node:http';
import type { HostName } from '../config/types.js';
import type { Deps } from './deps.js';
import type { Operator } from './operators.js';
import { createApiApp } from './api.js';
import { createAuthApp } from './auth.js';
import { createConsoleApp } from './console.js';
import { createSiteApp } from './site.js';
import { createGraphApp } from './graph.js';
import { createAdminApp } from './admin.js';

export interface HostSpec {
  /** What `npm start` prints beside the listener's address. */
  title: string;
  create(deps: Deps, secrets: { adminToken: string; operators: Operator[] }): Koa;
  /** Server settings a host needs beyond Node's defaults. */
  tune?(server: Server): void;
}

export const HOSTS: Record<HostName, HostSpec> = {
  api: {
    title: 'API',
    // No tuning: the request timeout of src/http/listener.ts times only the receiving of a request, so the
    // 14-minute synchronous wait is not cut by it (and requestTimeout = 0 left stalled bodies open forever).
    create: (deps) => createApiApp(deps),
  },
  auth: { title: 'sign-in', create: (deps) => createAuthApp(deps) },
  console: { title: 'console', create: (deps) => createConsoleApp(deps) },
  site: {
    title: 'site',
    create: (deps) => createSiteApp(deps),
    tune(server) {
      // svc_chat_completion over MCP waits as long as the API route does (14 minutes).
      server.requestTimeout = 0;
      server.keepAliveTimeout = 65_000;
    },
  },
  graph: { title: 'graph MCP', create: (deps) => createGraphApp(deps) },
  admin: { title: 'admin API', create: (deps, { adminToken, operators }) => createAdminApp(deps, adminToken, operators) },
};
