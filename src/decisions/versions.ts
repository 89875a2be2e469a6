/**
 * What a runtime decides with, as the version history keeps it: the policy (its wasm and the Rego it was
 * built from), the policy's `data` document (the catalog and rules as the policy sees them, with which
 * routes were configured), and the catalog and rules files themselves. The policy's Rego is known by its
 * source hash (`policy-sources`), the one its bundle's manifest records. Each is known by the SHA-256 of its
 * bytes, so a decision record can name exactly what it was taken under, and a reviewer can fetch each one
 * later and check it is what the record names.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../canonical-json.js';
import { policyData, type Runtime } from '../config/compile.js';
import type { ConfigBundle } from '../config/load.js';
import type { PolicyData } from '../policy/engine.js';
import { policyBundleFiles } from '../policy/bundle.js';
import { policySources } from '../policy/source-hash.js';
import { readPolicyManifest } from '../policy/manifest.js';
import type { StoredVersion } from './store.js';

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/**
 * The hash of a set of Rego sources (path -> text), as policySourceHash (src/policy/source-hash.ts) hashes
 * them on disk and as the bundle's manifest records it (`sourceHash`): each path and content in path order,
 * NUL-separated. Names the Rego a wasm was built from, so a replay can check the Rego it runs `opa eval` on.
 */
export function sourcesHash(sources: Record<string, string>): string {
  const hash = createHash('sha256');
  for (const path of Object.keys(sources).sort()) hash.update(path).update('\0').update(sources[path]!).update('\0');
  return hash.digest('hex');
}

/** The `sourceHash` of the manifest beside a root's bundle: what its wasm was built from (null if unreadable). */
function manifestSourceHash(root: string): string | null {
  try {
    return readPolicyManifest(policyBundleFiles(root).manifestPath).sourceHash;
  } catch {
    return null;
  }
}

/** The files a decision depends on besides the policy, by the names the version history uses. */
const DECIDING_DOCUMENTS = { catalog: 'models', rungs: 'rungs', guardrails: 'guardrails' } as const;
/** Served beside them so that anything a receipt names can be fetched. */
const SERVED_DOCUMENTS = { ...DECIDING_DOCUMENTS, firewall: 'firewall', compliance: 'compliance' } as const;

/** The policy's `data` document as stored: canonical JSON, so its hash is the same wherever it is made. */
export function dataDocument(data: PolicyData): { text: string; sha256: string } {
  const text = canonicalJson(data);
  return { text, sha256: sha256(text) };
}

/** The `data` a candidate's documents give, with the routes configured as `available` says. */
export function candidateData(docs: Pick<ConfigBundle, 'models' | 'rungs' | 'guardrails'>, available: Record<string, boolean>): PolicyData {
  return policyData(docs as ConfigBundle, (m) => available[m.id] === true);
}

/** Which catalog models had a configured route, as a `data` document says. */
export function availability(data: PolicyData): Record<string, boolean> {
  return Object.fromEntries(Object.entries(data.catalog.models).map(([id, m]) => [id, m.available]));
}

interface RuntimeFacts {
  data: PolicyData;
  dataSha256: string;
  dataText: string;
  /** Document name -> SHA-256, as a decision record's `documents`. */
  documents: Record<string, string>;
}

const facts = new WeakMap<Runtime, RuntimeFacts>();

/** Computed once per runtime (it is immutable). */
export function runtimeFacts(runtime: Runtime): RuntimeFacts {
  let f = facts.get(runtime);
  if (!f) {
    const data = policyData(runtime.bundle, (m) => runtime.models.get(m.id)?.available ?? false);
    const d = dataDocument(data);
    const b = runtime.bundle;
    const sourceHash = manifestSourceHash(b.root);
    f = {
      data,
      dataSha256: d.sha256,
      dataText: d.text,
      // In key order: every decision record carries it, and its canonical text has nothing to reorder then.
      documents: {
        catalog: b.models.sha256,
        guardrails: b.guardrails.sha256,
        policy: runtime.policy.sha256,
        'policy-data': d.sha256,
        // The Rego the wasm was built from (a runtime is only compiled from a bundle whose manifest matches it).
        ...(sourceHash ? { 'policy-sources': sourceHash } : {}),
        rungs: b.rungs.sha256,
      },
    };
    facts.set(runtime, f);
  }
  return f;
}

/**
 * Every version of a runtime, with content, read from its root. A file changed on disk since the runtime
 * loaded it no longer has the hash the runtime names: it is left out (and named in `missing`) rather than
 * stored under the wrong hash.
 */
export function runtimeVersions(runtime: Runtime): { versions: StoredVersion[]; missing: string[] } {
  const b = runtime.bundle;
  const out: StoredVersion[] = [];
  const missing: string[] = [];
  const f = runtimeFacts(runtime);
  out.push({ document: 'policy-data', version: f.dataSha256.slice(0, 12), sha256: f.dataSha256, encoding: 'utf8', content: f.dataText });
  for (const [document, key] of Object.entries(SERVED_DOCUMENTS)) {
    const doc = b[key];
    try {
      const text = readFileSync(join(b.root, doc.file));
      if (sha256(text) === doc.sha256) {
        out.push({ document, version: doc.version, sha256: doc.sha256, file: doc.file, encoding: 'utf8', content: text.toString('utf8') });
        continue;
      }
    } catch {
      // unreadable: missing below
    }
    missing.push(document);
  }
  const files = policyBundleFiles(b.root);
  try {
    const wasm = readFileSync(files.wasmPath);
    if (sha256(wasm) !== runtime.policy.sha256) throw new Error('changed');
    const sources = Object.fromEntries(policySources(files.root).map((p) => [p, readFileSync(join(files.root, p), 'utf8')]));
    // The Rego kept is the Rego the wasm was built from, or none is kept.
    const sourceHash = sourcesHash(sources);
    if (sourceHash !== f.documents['policy-sources']) throw new Error('changed');
    out.push({
      document: 'policy',
      version: runtime.policy.version,
      sha256: runtime.policy.sha256,
      file: 'policies/build/admission.wasm',
      encoding: 'base64',
      content: wasm.toString('base64'),
      sources,
      sourceHash,
    });
  } catch {
    missing.push('policy');
  }
  return { versions: out, missing };
}

/** The bytes of a stored version, and whether they hash to the SHA-256 it is stored under. */
export function versionBytes(v: StoredVersion): { bytes: Buffer; intact: boolean } {
  const bytes = Buffer.from(v.content, v.encoding === 'base64' ? 'base64' : 'utf8');
  return { bytes, intact: sha256(bytes) === v.sha256 };
}
