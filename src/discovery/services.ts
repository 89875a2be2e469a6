/**
 * GET /v1/security/services (public): what the service offers, task by task, derived from the catalog
 * (which models serve which task, on which team and route, and whether they are served) and the rules
 * (the task's band and summary, what each team asks, the lowest rung that opens the band). Nothing here is
 * written twice: change catalog/models.yaml or rules/rungs.yaml and this answer follows on reload.
 */
import type { Context } from 'koa';
import type { RuntimeHolder } from '../config/reloader.js';
import type { Runtime } from '../config/compile.js';

export function securityServices(rt: Runtime) {
  const bands = rt.bundle.rungs.data.bands;
  const rank = (band: string) => bands.indexOf(band);
  const rungs = [...rt.rungs.values()];
  const services = Object.entries(rt.tasks).map(([task, t]) => {
    const teams = (['blue', 'red'] as const).flatMap((team) => {
      const bar = rt.teams[team];
      const models = rt.modelList.filter((m) => m.team === team && m.tasks.has(task));
      // Blue serves the standard tasks only, up to its highest band; red serves up to its own.
      if (!models.length || rank(t.band) > rank(bar.maxBand) || (team === 'blue' && !t.standard)) return [];
      const rung = bar.requiresVerification ? rungs.find((r) => rank(r.band) >= rank(t.band)) : undefined;
      return [
        {
          team,
          route: models[0]!.route,
          models: models.map((m) => ({ id: m.id, availability: m.available ? 'served' : 'route not configured' })),
          requires: {
            signedIn: true,
            verification: bar.requiresVerification,
            aupConsent: bar.requiresAup,
            approvedScope: bar.requiresScope,
            rung: rung ? { id: rung.id, level: rung.level } : null,
          },
        },
      ];
    });
    return { task, summary: t.summary ?? null, band: t.band, standard: t.standard, teams };
  });
  return { object: 'list', versions: { catalog: rt.versions.catalog, rules: rt.versions.rules }, bands, data: services };
}

export function listSecurityServices(holder: RuntimeHolder) {
  return function listSecurityServices(ctx: Context): void {
    ctx.body = securityServices(holder.current);
  };
}
