/**
 * `portcullis policy impact [--candidate <dir>] [--since 24h] [--until TIME] [--root DIR] [--json]`
 *
 * A policy author's review of a change before it goes live (src/decisions/impact.ts). With `--candidate`,
 * the live decisions of the period (admin API, GET /admin/decisions) are decided again here under the
 * candidate folder (laid out as a configuration root: policies/ with its built bundle, rules/, catalog/; what
 * it lacks comes from --root, PORTCULLIS_ROOT or the current folder), each with the data it was recorded
 * with (GET /v1/secure/history on the API). Without `--candidate`, the gateway reports on the policy and rules
 * on its own disk (GET /admin/policy/impact) — what a reload would load, and what `policy.requireImpactReport`
 * asks for before one. Prints counts by code, per principal hash, and examples; `--json` prints the report.
 * Exit 0 with a report; 2 on usage, a candidate that does not load, or a gateway that cannot be reached.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config/documents.js';
import type { PolicyData } from '../policy/engine.js';
import { loadCandidate, type Candidate } from '../decisions/candidate.js';
import { impactOf, impactText, type ImpactReport } from '../decisions/impact.js';
import type { DecisionRecord } from '../decisions/record.js';
import { parseWhen } from '../decisions/admin-routes.js';
import { pagesOf } from '../decisions/store.js';
import { adminGet, apiBase, CliUsage, getJson } from './decision.js';

export async function policyImpactCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      candidate: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      root: { type: 'string' },
      url: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const since = values.since ?? '24h';
  // The period is checked here, for both ways of reporting: an empty or out-of-range time is a usage error.
  const now = Date.now();
  let from: number;
  let to: number;
  try {
    if (since === '' || values.until === '') throw new Error('--since and --until need a value: a duration back from now (90m, 24h, 7d) or an ISO-8601 time');
    from = parseWhen(since, now, '--since')!;
    to = parseWhen(values.until, now, '--until') ?? now + 1;
  } catch (err) {
    throw new CliUsage((err as Error).message);
  }
  const query = `since=${encodeURIComponent(since)}${values.until ? `&until=${encodeURIComponent(values.until)}` : ''}`;
  let report: ImpactReport;
  let label: string;
  if (!values.candidate) {
    report = (await adminGet(`/policy/impact?${query}`)) as ImpactReport;
    label = "the policy and rules on the gateway's disk";
  } else {
    if (!existsSync(values.candidate)) throw new CliUsage(`no candidate folder ${values.candidate}`);
    // A candidate is a folder laid out as a configuration root; a file (a YAML, a tarball) would leave every
    // document to the live root and report on the live files as if they were the candidate.
    if (!statSync(values.candidate).isDirectory())
      throw new CliUsage(
        `the candidate ${values.candidate} is not a folder: give a folder laid out as a configuration root (policies/, rules/, catalog/), e.g. mkdir cand && cp -r rules cand/`,
      );
    let candidate: Candidate;
    try {
      candidate = await loadCandidate(resolve(values.candidate), resolve(values.root ?? process.env['PORTCULLIS_ROOT'] ?? process.cwd()));
    } catch (err) {
      if (err instanceof ConfigError) throw new CliUsage(`the candidate does not load:\n${err.message}`);
      throw err;
    }
    // Every live record of the period, page by page (the listing answers at most MAX_LIST at a time).
    // With each page, which of its decisions left no receipt: those are counted apart (impact.ts).
    const noReceipt = new Set<string>();
    const list = async (f: number, t: number, limit: number) => {
      const page = await adminGet(
        `/decisions?since=${encodeURIComponent(new Date(f).toISOString())}&until=${encodeURIComponent(new Date(t).toISOString())}&limit=${limit}&receipts=true`,
      );
      for (const id of (page.noReceipt ?? []) as string[]) noReceipt.add(id);
      return page.data as DecisionRecord[];
    };
    const receiptsOf = async (records: readonly DecisionRecord[]) => new Set(records.filter((r) => !noReceipt.has(r.decision_id)).map((r) => r.decision_id));
    const api = apiBase(values.url);
    const dataFor = async (sha: string) => {
      const v = await getJson(`${api}/v1/secure/history/policy-data/${sha}`, {}, true);
      return v ? (JSON.parse(v.content as string) as PolicyData) : null;
    };
    report = await impactOf(pagesOf(list, from, to), candidate, dataFor, { from, to }, receiptsOf);
    label = `candidate ${values.candidate}`;
  }
  process.stdout.write(`${values.json ? JSON.stringify(report, null, 2) : impactText(report, label)}\n`);
  return 0;
}
