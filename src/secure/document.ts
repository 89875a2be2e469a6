/**
 * The body of GET /v1/secure, for compliance reviewers: what the running gateway decides with, straight
 * from the YAML its live runtime loaded — the guardrail rules (with their detectors and external
 * classifiers), the request firewall, the compliance statements and the rung table — each with its
 * `version` and the SHA-256 of the file, the admission policy's version and hash, the versions a receipt's
 * `decision.versions` names, the receipt log (its name and the key its checkpoints are signed with), and the version history (which
 * content went live when).
 *
 * Left out on purpose: where an external classifier lives and which environment variable holds its key
 * (`url`, `apiKeyEnv`) — operator infrastructure, not rules. Everything else of the files is served.
 */
import { decisionVersions, type Runtime } from '../config/compile.js';
import { documentRefs } from './recorder.js';
import type { DocumentVersion } from './history.js';

import type { ReceiptLogInfo } from '../receipts/service.js';

function served<T extends Record<string, unknown>>(doc: { file: string; version: string; sha256: string; data: T }) {
  const { version: _version, ...rest } = doc.data;
  return { version: doc.version, sha256: doc.sha256, file: doc.file, ...rest };
}

function guardrails(runtime: Runtime) {
  const g = served(runtime.bundle.guardrails);
  const classifiers = g['classifiers'] as Array<Record<string, unknown>> | undefined;
  if (!classifiers) return g;
  return { ...g, classifiers: classifiers.map(({ url: _url, apiKeyEnv: _apiKeyEnv, ...c }) => c) };
}

function rungs(runtime: Runtime) {
  const doc = runtime.bundle.rungs;
  const r = doc.data;
  return {
    version: doc.version,
    sha256: doc.sha256,
    file: doc.file,
    table: r.rungs.map((x) => ({
      rung: x.id,
      level: x.level,
      evidence: x.evidence,
      tokensPerDay: x.tokensPerDay,
      ceilingPerDay: x.ceilingPerDay,
      band: x.band,
      validityDays: x.validityDays,
    })),
    bands: r.bands,
    tasks: r.tasks,
    teams: r.teams,
    aup: r.aup,
    freeAllowance: r.freeAllowance,
  };
}

export function secureBody(runtime: Runtime, history: readonly DocumentVersion[], receiptLog: ReceiptLogInfo) {
  const v = runtime.versions;
  const live = new Set(documentRefs(runtime).map((r) => `${r.document} ${r.sha256}`));
  return {
    object: 'secure',
    // The same names a receipt's decision.versions carries, so a receipt can be matched to this body.
    versions: decisionVersions(v),
    policy: { version: runtime.policy.version, sha256: runtime.policy.sha256, entrypoint: 'admission/decision' },
    guardrails: guardrails(runtime),
    firewall: served(runtime.bundle.firewall),
    compliance: served(runtime.bundle.compliance),
    rungs: rungs(runtime),
    // The receipt log: its name and the key its checkpoints are signed with (PEM and C2SP verifier key).
    receiptLog,
    history: history.map((h) => ({ ...h, live: live.has(`${h.document} ${h.sha256}`) })),
  };
}
