/**
 * A host's Koa app, begun with what every listener runs first. Koa's `use` only appends, so a host's whole
 * middleware order reads top to bottom: the listener's front (the request id, the request line and metrics,
 * then health: src/http/listener.ts), the failed-authentication limit (before any credential is looked at,
 * so before an operator-token check), then what the host's composition file appends.
 */
import Koa from 'koa';

/** What every host runs ahead of its own middleware, outermost first. */
export type Front = readonly Koa.Middleware[];

export function hostApp(front: Front): Koa {
  const app = new Koa({ proxy: false });
  for (const middleware of front) app.use(middleware);
  return app;
}
