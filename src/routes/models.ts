/**
 * GET /v1/models (public): the catalog, authoritative for which models exist. Availability is derived from
 * the configured routes, never written in the catalog.
 */
import type { Context } from 'koa';
import type { RuntimeHolder } from '../config/reloader.js';

export function listModels(holder: RuntimeHolder) {
  return function listModels(ctx: Context): void {
    ctx.body = {
      object: 'list',
      data: holder.current.modelList.map((m) => ({
        id: m.id,
        object: 'model',
        owned_by: 'portcullis',
        team: m.team,
        route: m.route,
        availability: m.available ? 'served' : 'route not configured',
      })),
    };
  };
}
