/**
 * Decision records on the admin API (mounted by app/admin.ts, behind the operator token; every GET is open
 * to a read-only operator):
 *   GET /admin/decisions/{id}                  one decision record
 *   GET /admin/decisions?since=24h&until=&limit=&kind=live|shadow
 *                                              the records of a period, oldest first (`since` is a duration
 *                                              back from now — 90m, 24h, 7d — or an ISO time); `truncated`
 *                                              and `next` (the `since` to go on from) when `limit` cut it;
 *                                              `receipts=true` adds `noReceipt`, the live decisions listed
 *                                              whose call left no receipt
 *   GET /admin/decisions/receipt/{receiptId}   a receipt with its log proof and its decision record: what
 *                                              `portcullis decision replay <receipt id>` starts from
 *   GET /admin/policy/impact?since=24h&until=  the impact report (impact.ts) of the policy and rules now on the
 *                                              gateway's disk — what a reload would load — over the live
 *                                              decisions of the period; remembered for `requireImpactReport`
 * And, ahead of POST /admin/reload: with `policy.requireImpactReport`, a reload whose policy or rules differ
 * from the live ones is refused 409 `impact-report-required` until an impact report was made for exactly
 * that candidate. A candidate that does not load passes on, for the reload to refuse it by name. The other
 * reload paths (file watcher, SIGHUP) are held by the same rule in reload-gate.ts.
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import type { Deps } from '../app/deps.js';
import { GatewayError } from '../errors.js';
import { withProof } from '../receipts/proofs.js';
import { MAX_LIST, pagesOf } from './store.js';
import { loadCandidate } from './candidate.js';
import { runtimeFingerprint } from './reload-gate.js';
import { impactOf, type ReceiptsOf } from './impact.js';
import type { PolicyData } from '../policy/engine.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A time from a query value: a duration back from `now` (`24h`), or an ISO-8601 time. Null when absent. */
export function parseWhen(value: unknown, now: number, name: string): number | null {
  if (value === undefined || value === '') return null;
  // A repeated query parameter arrives as an array: one value only.
  const v = typeof value === 'string' ? value : '';
  const d = /^(\d+)([smhd])$/.exec(v);
  // A time must be one a Date can hold (±8.64e15 ms): a huge duration (999999999d) is refused here rather
  // than failing later where the period is printed.
  const t = d ? now - Number(d[1]) * UNITS[d[2]!]! : /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
  if (Number.isFinite(new Date(t).getTime())) return t;
  const why = d ? `${name} reaches too far back for a date` : `${name} must be a duration back from now (90m, 24h, 7d) or an ISO-8601 time`;
  throw new GatewayError('invalid-request', why, { param: name });
}

/** The period a query names: `since` (default 24h) to `until` (default now). */
export function period(ctx: Context, now: number): { from: number; to: number } {
  const from = parseWhen(ctx.query['since'], now, 'since') ?? now - UNITS['d']!;
  const to = parseWhen(ctx.query['until'], now, 'until') ?? now + 1;
  return { from, to };
}

/** Of `records`, the ids of those whose call left a receipt (`rcpt_<call id>` is in the store). */
export function receiptsIn(store: Pick<Deps['store'], 'getReceipt'>): ReceiptsOf {
  return async (records) => {
    const found = await Promise.all(records.map(async (r) => ((await store.getReceipt(`rcpt_${r.call_id}`)) ? r.decision_id : null)));
    return new Set(found.filter((id): id is string => id !== null));
  };
}

export function mountDecisionsAdmin(router: Router, deps: Pick<Deps, 'decisions' | 'store' | 'receipts' | 'now' | 'holder'>): void {
  const store = deps.decisions.store;
  router.get('/policy/impact', async (ctx) => {
    const now = deps.now();
    const { from, to } = period(ctx, now);
    const root = deps.holder.current.bundle.root;
    let candidate;
    try {
      candidate = await loadCandidate(root, root);
    } catch (err) {
      throw new GatewayError('config-invalid', (err as Error).message);
    }
    const dataFor = async (sha: string) => {
      const v = await store.getVersion('policy-data', sha);
      return v ? (JSON.parse(v.content) as PolicyData) : null;
    };
    const report = await impactOf(
      pagesOf((f, t, l) => store.list(f, t, l, now), from, to),
      candidate,
      dataFor,
      { from, to },
      receiptsIn(deps.store),
    );
    await store.noteReport(candidate.fingerprint, new Date(now).toISOString());
    ctx.body = report;
  });
  router.post('/reload', async (_ctx, next) => {
    const runtime = deps.holder.current;
    if (!runtime.gateway.policy?.requireImpactReport) {
      await next();
      return;
    }
    const root = runtime.bundle.root;
    const candidate = await loadCandidate(root, root).catch(() => null);
    if (!candidate || candidate.fingerprint === runtimeFingerprint(runtime) || (await store.reported(candidate.fingerprint))) {
      await next();
      return;
    }
    throw new GatewayError(
      'impact-report-required',
      `the policy or rules on disk (policy ${candidate.policy.version}, rules ${candidate.documents.rungs.version}, guardrails ${candidate.documents.guardrails.version}) differ from the live ones and no impact report was made for them: GET /admin/policy/impact (or portcullis policy impact) first`,
    );
  });
  router.get('/decisions', async (ctx) => {
    const { from, to } = period(ctx, deps.now());
    const raw = ctx.query['limit'];
    const limit = raw === undefined ? 1000 : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST)
      throw new GatewayError('invalid-request', `limit must be a whole number from 1 to ${MAX_LIST}`, { param: 'limit' });
    const kind = ctx.query['kind'];
    if (kind !== undefined && kind !== 'live' && kind !== 'shadow') throw new GatewayError('invalid-request', 'kind must be live or shadow', { param: 'kind' });
    // One more than asked says whether the period holds more: `truncated`, and `next`, the `since` that
    // lists on from the last record given (records of that same millisecond are given again).
    const receipts = ctx.query['receipts'];
    if (receipts !== undefined && receipts !== 'true') throw new GatewayError('invalid-request', 'receipts must be true or absent', { param: 'receipts' });
    const got = await store.list(from, to, limit + 1, deps.now());
    const all = got.slice(0, limit);
    const truncated = got.length > limit;
    const data = kind ? all.filter((r) => r.labels['kind'] === kind) : all;
    // receipts=true: which of the listed live decisions left no receipt (what an impact report leaves out).
    let noReceipt: string[] | undefined;
    if (receipts) {
      const live = data.filter((r) => r.labels['kind'] === 'live');
      const receipted = await receiptsIn(deps.store)(live);
      noReceipt = live.filter((r) => !receipted.has(r.decision_id)).map((r) => r.decision_id);
    }
    ctx.body = {
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      truncated,
      next: truncated ? all.at(-1)!.timestamp : null,
      ...(noReceipt ? { noReceipt } : {}),
      data,
    };
  });
  router.get('/decisions/receipt/:receiptId', async (ctx) => {
    const receipt = await deps.store.getReceipt(ctx.params['receiptId']!);
    if (!receipt) throw new GatewayError('decision-not-found', `no receipt ${ctx.params['receiptId']!}, so no decision record for it`);
    const ref = (receipt['decision'] as { record?: { id: string } } | undefined)?.record;
    const record = ref ? await store.get(ref.id) : null;
    ctx.body = { receipt: await withProof(deps.receipts.log, receipt), record };
  });
  router.get('/decisions/:id', async (ctx) => {
    const record = await store.get(ctx.params['id']!);
    if (!record) throw new GatewayError('decision-not-found');
    ctx.body = record;
  });
}
