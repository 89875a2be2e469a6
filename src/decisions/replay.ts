/**
 * Replaying a receipt's decision: from the receipt, its decision record and the versions the record names
 * (fetched from the version history), re-derive the decision and say whether it is the one recorded.
 * Every link is checked, and each failure names what did not hold:
 *
 *   record named     the receipt carries `decision.record` (receipts from before decision records do not)
 *   record hash      the record hashes (RFC 8785, SHA-256) to what the receipt says: it was not changed
 *   record binds     the record is this call's: call id, versions, allow and denial codes as on the receipt
 *   receipt in log   the receipt's inclusion proof leads to a checkpoint signed with the log's key
 *   versions         the policy, its data document and the catalog and rules files hash to what the record
 *                    names, and the data document is what those rules and that catalog give
 *   policy sources   the Rego served with the policy hashes to the source hash the record names (the
 *                    bundle manifest's `sourceHash`): it is the Rego the wasm was built from
 *   opa-wasm         the policy wasm of that version, given that data, decides the recorded input the same
 *   opa eval         and so does `opa eval` on that Rego, when the opa binary is at hand
 */
import { isDeepStrictEqual } from 'node:util';
import type { KeyObject } from 'node:crypto';
import { parseDocument } from 'yaml';
import type { ConfigBundle } from '../config/load.js';
import type { Decision, PolicyData } from '../policy/engine.js';
import { verifyReceiptBundle } from '../receipts/verify.js';
import { recordSha256, type DecisionRecord } from './record.js';
import type { StoredVersion } from './store.js';
import { availability, candidateData, dataDocument, sourcesHash, versionBytes } from './versions.js';
import { opaEvaluate, wasmEvaluator } from './evaluate.js';

interface ReplayCheck {
  check: string;
  ok: boolean;
  detail: string;
}

export interface ReplayReport {
  ok: boolean;
  receipt: string;
  decision: string | null;
  /** True when every engine that ran re-derived the recorded result exactly. */
  same: boolean;
  checks: ReplayCheck[];
  /** What differs between the recorded result and a replayed one, one line per field. */
  differences: string[];
  engines: string[];
}

type FetchVersion = (document: string, sha256: string) => Promise<StoredVersion | null>;

/** Every path at which two JSON values differ, with both values. */
export function differences(recorded: unknown, replayed: unknown, path = 'result'): string[] {
  if (isDeepStrictEqual(recorded, replayed)) return [];
  const obj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
  if (obj(recorded) && obj(replayed) && Array.isArray(recorded) === Array.isArray(replayed)) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(replayed)])].sort();
    return keys.flatMap((k) => differences(recorded[k], replayed[k], Array.isArray(recorded) ? `${path}[${k}]` : `${path}.${k}`));
  }
  return [`${path}: recorded ${JSON.stringify(recorded) ?? 'nothing'}, replayed ${JSON.stringify(replayed) ?? 'nothing'}`];
}

const RULE_DOCS = { catalog: 'models', rungs: 'rungs', guardrails: 'guardrails' } as const;
const VERSION_NAMES: Record<string, string> = { catalog: 'catalog', rungs: 'rules', guardrails: 'guardrails' };

export async function replayReceipt(
  receipt: Record<string, unknown>,
  record: DecisionRecord | null,
  fetchVersion: FetchVersion,
  opts: { publicKey?: KeyObject; opa?: string | null } = {},
): Promise<ReplayReport> {
  const checks: ReplayCheck[] = [];
  const add = (check: string, ok: boolean, detail: string) => void checks.push({ check, ok, detail });
  const report = (extra: Partial<ReplayReport> = {}): ReplayReport => ({
    ok: checks.every((c) => c.ok),
    receipt: String(receipt['id']),
    decision: record?.decision_id ?? null,
    same: false,
    checks,
    differences: [],
    engines: [],
    ...extra,
  });
  const d = (receipt['decision'] ?? {}) as { allow?: boolean; codes?: string[]; versions?: Record<string, string>; record?: { id?: string; sha256?: string } };

  if (opts.publicKey) {
    const v = verifyReceiptBundle(receipt, opts.publicKey);
    add('receipt in log', v.ok, v.ok ? `leaf ${v.logIndex} of the signed checkpoint of size ${v.checkpoint.size}` : v.reason);
  }
  if (!d.record?.id || !d.record.sha256) {
    add('record named', false, 'the receipt names no decision record (it predates decision records)');
    return report();
  }
  if (!record) {
    add('record found', false, `no decision record ${d.record.id} (never stored, or past its retention)`);
    return report();
  }
  const sha = recordSha256(record);
  add(
    'record hash',
    sha === d.record.sha256,
    sha === d.record.sha256
      ? `${record.decision_id} hashes to ${sha.slice(0, 16)}…, as the receipt says`
      : `the record hashes to ${sha}, the receipt names ${d.record.sha256}: the record or the receipt was changed`,
  );
  const codes = record.result.denials?.map((x) => x.code) ?? [];
  const binds: string[] = [];
  if (record.decision_id !== d.record.id) binds.push(`its id is ${record.decision_id}, the receipt names ${d.record.id}`);
  if (record.call_id !== receipt['callId']) binds.push(`it is of call ${record.call_id}, the receipt of ${String(receipt['callId'])}`);
  if (!isDeepStrictEqual(record.versions, d.versions))
    binds.push(`its versions ${JSON.stringify(record.versions)} are not the receipt's ${JSON.stringify(d.versions)}`);
  if (record.result.allow !== d.allow || !isDeepStrictEqual(codes, d.codes))
    binds.push(`it decided ${JSON.stringify({ allow: record.result.allow, codes })}, the receipt says ${JSON.stringify({ allow: d.allow, codes: d.codes })}`);
  add('record binds', binds.length === 0, binds.length === 0 ? "the record is this call's: same versions, same answer" : binds.join('; '));

  // The versions the record names, each checked against its hash.
  const fetched = async (document: string, want: string | undefined): Promise<StoredVersion | null> => {
    if (!want) {
      add(`version ${document}`, false, `the record names no ${document}`);
      return null;
    }
    const v = await fetchVersion(document, want);
    if (!v) add(`version ${document}`, false, `${document} ${want.slice(0, 12)} is not in the version history`);
    else if (v.sha256 !== want || !versionBytes(v).intact)
      add(`version ${document}`, false, `the ${document} served under ${want.slice(0, 12)} does not hash to it: it was changed`);
    else return v;
    return null;
  };
  const policy = await fetched('policy', record.bundles.admission.revision);
  if (policy && policy.version !== record.versions['policy'])
    add('version policy', false, `the policy is version ${policy.version}, the record names ${record.versions['policy']}`);
  const dataVersion = await fetched('policy-data', record.documents['policy-data']);
  let data: PolicyData | null = null;
  if (dataVersion) data = JSON.parse(dataVersion.content) as PolicyData;
  const docs: Record<string, { data: unknown }> = {};
  for (const [document, key] of Object.entries(RULE_DOCS)) {
    const v = await fetched(document, record.documents[document]);
    if (!v) continue;
    if (v.version !== record.versions[VERSION_NAMES[document]!])
      add(`version ${document}`, false, `${document} is version ${v.version}, the record names ${record.versions[VERSION_NAMES[document]!]}`);
    docs[key] = { data: parseDocument(v.content).toJS() };
  }
  if (data && Object.keys(docs).length === 3) {
    const rebuilt = dataDocument(candidateData(docs as unknown as Pick<ConfigBundle, 'models' | 'rungs' | 'guardrails'>, availability(data)));
    const ok = rebuilt.sha256 === record.documents['policy-data'];
    add(
      'versions',
      ok,
      ok
        ? `policy ${policy?.version ?? '?'}, rules ${record.versions['rules']}, catalog ${record.versions['catalog']}, guardrails ${record.versions['guardrails']}: each as named, and the data document is what they give`
        : 'the data document is not what the named rules and catalog give',
    );
  }
  // The Rego `opa eval` is run on must be the Rego the wasm was built from: its hash is the one the record
  // names (`policy-sources`, bound to the receipt with the record), or for a record from before that, the
  // one the version history serves beside it. Rego that is missing, changed or unnamed fails here.
  let regoOk = false;
  if (policy) {
    const sources = policy.sources ?? {};
    const named = record.documents['policy-sources'] ?? policy.sourceHash;
    const got = Object.keys(sources).length > 0 ? sourcesHash(sources) : null;
    if (!got) add('policy sources', false, `the version history serves no Rego for policy ${policy.version}`);
    else if (!named) add('policy sources', false, `nothing names the hash of policy ${policy.version}'s Rego, so the Rego served cannot be checked`);
    else if (got !== named || (policy.sourceHash !== undefined && policy.sourceHash !== named))
      add(
        'policy sources',
        false,
        `the Rego served for policy ${policy.version} hashes to ${got.slice(0, 16)}…, the ${record.documents['policy-sources'] ? 'record' : 'version history'} names ${named.slice(0, 16)}…: it was changed`,
      );
    else {
      regoOk = true;
      add(
        'policy sources',
        true,
        `the Rego (${Object.keys(sources).length} file(s)) hashes to ${got.slice(0, 16)}…, the source hash the ${record.documents['policy-sources'] ? 'record' : 'version history'} names`,
      );
    }
  }
  if (!policy || !data) return report();

  // Re-derive the decision with each engine.
  const engines: string[] = [];
  const diffs: string[] = [];
  const wasm = versionBytes(policy).bytes;
  let replayed: Decision;
  try {
    replayed = (await wasmEvaluator(wasm, data)).decide(record.input);
  } catch (err) {
    add('opa-wasm', false, `the policy could not be evaluated: ${(err as Error).message}`);
    return report();
  }
  engines.push('opa-wasm');
  const wasmDiff = differences(record.result, replayed);
  add('opa-wasm', wasmDiff.length === 0, wasmDiff.length === 0 ? 'the same decision' : `${wasmDiff.length} field(s) differ`);
  diffs.push(...wasmDiff.map((x) => `opa-wasm: ${x}`));
  if (opts.opa && !regoOk) add('opa eval', false, 'not run: the Rego did not check (policy sources above)');
  else if (opts.opa && policy.sources) {
    try {
      const [byOpa] = await opaEvaluate(opts.opa, policy.sources, data, [record.input]);
      engines.push('opa eval');
      const opaDiff = differences(record.result, byOpa);
      add('opa eval', opaDiff.length === 0, opaDiff.length === 0 ? 'the same decision, from the Rego' : `${opaDiff.length} field(s) differ`);
      diffs.push(...opaDiff.map((x) => `opa eval: ${x}`));
    } catch (err) {
      add('opa eval', false, `opa eval failed: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return report({ same: diffs.length === 0, differences: diffs, engines });
}
