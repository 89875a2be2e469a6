/**
 * Operator tokens and their scopes. `PORTCULLIS_ADMIN_TOKEN` is the operator with every right (`full`);
 * `admin.operators` in config/gateway.yaml adds named operators, each with its own token (read from the
 * environment variable it names, never written in YAML) and a scope:
 *
 * - `read-only`: every GET of the admin API (listings, receipts, the configuration dump, metrics of runtime);
 * - `billing`: what read-only may, plus granting credits and setting plans;
 * - `full`: everything, reloads and principals, rungs, scopes and tokens included.
 *
 * Every use is logged (`admin.request`: the operator's name and scope, method, route pattern and status —
 * never the token), refusals included. Read at start, like the listeners.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { RouterContext } from '@koa/router';
import { ConfigError } from '../config/documents.js';
import type { GatewayDoc } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';

export type { OperatorScope } from './admin-config.js';
import type { OperatorScope } from './admin-config.js';

export interface Operator {
  name: string;
  scope: OperatorScope;
  /** sha256 of the token: compared in constant time, the token itself is not kept. */
  digest: Buffer;
}

const digest = (token: string) => createHash('sha256').update(token).digest();

/** The operators of a gateway: the main token (full), then each of `admin.operators`. */
export function operatorsFrom(cfg: GatewayDoc, env: Record<string, string | undefined>, adminToken: string, file = 'config/gateway.yaml'): Operator[] {
  const operators: Operator[] = [{ name: 'operator', scope: 'full', digest: digest(adminToken) }];
  const problems: string[] = [];
  (cfg.admin?.operators ?? []).forEach((o, i) => {
    const token = env[o.tokenEnv];
    if (!token) problems.push(`${file}: /admin/operators/${i}/tokenEnv names ${o.tokenEnv}, which is not set in the environment`);
    // Tokens are told apart by value: one shared with the main token would make it this operator (and,
    // if scoped, demote the main token). Refused at start, and by `portcullis check` where both are set.
    else if (token === adminToken)
      problems.push(`${file}: /admin/operators/${i}/tokenEnv: ${o.tokenEnv} holds the same token as PORTCULLIS_ADMIN_TOKEN; give each operator its own`);
    else if (operators.some((x) => x.name === o.name)) problems.push(`${file}: /admin/operators/${i}/name repeats "${o.name}"`);
    else operators.push({ name: o.name, scope: o.scope, digest: digest(token) });
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return operators;
}

/** The POST routes a billing operator may use: credits and plans. */
const BILLING_WRITES = /^\/admin\/principals\/[^/]+\/(credits|plan)$/;

export function allows(scope: OperatorScope, method: string, path: string): boolean {
  if (scope === 'full') return true;
  if (method === 'GET' || method === 'HEAD') return true;
  return scope === 'billing' && method === 'POST' && BILLING_WRITES.test(path);
}

/** The route pattern a request matches (`/admin/principals/:id/credits`), or null: never the raw path. */
export type RouteOf = (ctx: Context) => string | null;

/** Who is calling (401 when no operator holds the token), whether the scope allows it (403), and a log line for each use. */
export function operatorOnly(operators: Operator[], log: Logger, routeOf: RouteOf) {
  return async function operatorOnly(ctx: Context, next: Next): Promise<void> {
    const match = /^Bearer[ \t]+(\S+)$/i.exec(ctx.get('authorization'));
    const given = digest(match?.[1] ?? '');
    // Every digest is compared (no early exit), each in constant time.
    let operator: Operator | undefined;
    for (const o of operators) if (timingSafeEqual(given, o.digest) && match) operator = o;
    if (!operator) throw new GatewayError('admin-unauthorized');
    ctx.state.operator = { name: operator.name, scope: operator.scope };
    // The route pattern only: a raw path can carry a principal id, or a token pasted where an id belongs.
    const route = () => (ctx as Partial<RouterContext>).routerPath ?? routeOf(ctx) ?? '(no route)';
    const line = () => ({ operator: operator.name, scope: operator.scope, method: ctx.method, route: route(), status: ctx.status });
    if (!allows(operator.scope, ctx.method, ctx.path)) {
      ctx.status = 403;
      log.warn('admin.request', { ...line(), refused: true });
      throw new GatewayError(
        'admin-forbidden',
        `the operator token "${operator.name}" has the ${operator.scope} scope, which does not allow ${ctx.method} ${route()}`,
      );
    }
    try {
      await next();
    } finally {
      log.info('admin.request', line());
    }
  };
}
