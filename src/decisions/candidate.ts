/**
 * A candidate: a policy bundle and rules not yet live, in a folder laid out as a configuration root
 * (policies/ with its built bundle, rules/, catalog/). What the folder lacks is taken from `fallbackRoot`
 * (the live root), so a candidate may hold only the file it changes. A candidate whose Rego changed since
 * its bundle was built is refused with the command that rebuilds it, as a reload would refuse it.
 *
 * Which routes are configured is operator infrastructure, not policy: a candidate is evaluated with the
 * availability the recorded decision saw (its `data` document), so only the policy and rules differ.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadDocument, type LoadedDocument } from '../config/documents.js';
import { DOCUMENT_FILES } from '../config/load.js';
import { policyBundleFiles, policyBundleProblem } from '../policy/bundle.js';
import { policySources } from '../policy/source-hash.js';
import type { ModelsDoc, RungsDoc } from '../config/types.js';
import type { PolicyData } from '../policy/engine.js';
import { candidateData, dataDocument, sourcesHash } from './versions.js';
import { wasmEvaluator, type Evaluator } from './evaluate.js';

export interface Candidate {
  /** The folder the candidate was read from. */
  root: string;
  policy: { version: string; sha256: string };
  documents: Record<'catalog' | 'rungs' | 'guardrails', { file: string; version: string; sha256: string }>;
  /** SHA-256 over the policy's and the documents' hashes: names this candidate exactly. */
  fingerprint: string;
  wasm: Buffer;
  sources: Record<string, string>;
  /** The hash of `sources` (versions.ts sourcesHash), as its manifest records it. */
  sourceHash: string;
  /** Its `data` under the given route availability, and an evaluator of it (cached per availability). */
  evaluatorFor(available: Record<string, boolean>): Promise<{ data: PolicyData; dataSha256: string; evaluator: Evaluator }>;
}

/** Names a policy-and-rules combination exactly: SHA-256 over the hashes of the wasm, catalog, rungs and guardrails. */
export function fingerprintOf(policy: string, catalog: string, rungs: string, guardrails: string): string {
  return createHash('sha256').update([policy, catalog, rungs, guardrails].join('\n')).digest('hex');
}

function doc<T>(dir: string, fallbackRoot: string, file: string): LoadedDocument<T> {
  if (!existsSync(join(dir, file))) return loadDocument<T>(fallbackRoot, file);
  // Each YAML is read against the schema beside it, as the gateway reads it: a candidate copies the folder.
  const schema = file.replace(/\.ya?ml$/, '.schema.json');
  if (!existsSync(join(dir, schema)))
    throw new ConfigError([`${file}: the candidate has no ${schema} beside it; copy the whole folder (cp -r ${file.split('/')[0]} <candidate>/)`]);
  return loadDocument<T>(dir, file);
}

export async function loadCandidate(dir: string, fallbackRoot: string): Promise<Candidate> {
  const docs = {
    models: doc<ModelsDoc>(dir, fallbackRoot, DOCUMENT_FILES.models),
    rungs: doc<RungsDoc>(dir, fallbackRoot, DOCUMENT_FILES.rungs),
    guardrails: doc<Record<string, unknown>>(dir, fallbackRoot, DOCUMENT_FILES.guardrails),
  };
  const files = policyBundleFiles(existsSync(join(dir, 'policies')) ? dir : fallbackRoot);
  const stale = policyBundleProblem(files);
  if (stale) throw new ConfigError([stale]);
  const wasm = readFileSync(files.wasmPath);
  const sha256 = createHash('sha256').update(wasm).digest('hex');
  const sources = Object.fromEntries(policySources(files.root).map((p) => [p, readFileSync(join(files.root, p), 'utf8')]));
  const documents = {
    catalog: { file: docs.models.file, version: docs.models.version, sha256: docs.models.sha256 },
    rungs: { file: docs.rungs.file, version: docs.rungs.version, sha256: docs.rungs.sha256 },
    guardrails: { file: docs.guardrails.file, version: docs.guardrails.version, sha256: docs.guardrails.sha256 },
  };
  const fingerprint = fingerprintOf(sha256, documents.catalog.sha256, documents.rungs.sha256, documents.guardrails.sha256);
  const cache = new Map<string, Promise<{ data: PolicyData; dataSha256: string; evaluator: Evaluator }>>();
  return {
    root: dir,
    policy: { version: sha256.slice(0, 12), sha256 },
    documents,
    fingerprint,
    wasm,
    sources,
    sourceHash: sourcesHash(sources),
    evaluatorFor(available) {
      const key = JSON.stringify(Object.entries(available).sort());
      let made = cache.get(key);
      if (!made) {
        const data = candidateData(docs, available);
        made = wasmEvaluator(wasm, data).then((evaluator) => ({ data, dataSha256: dataDocument(data).sha256, evaluator }));
        cache.set(key, made);
      }
      return made;
    },
  };
}
