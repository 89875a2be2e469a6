/**
 * The intent models the evaluations build (intent-{independent,public,benign-public,recall,gate,traps}
 * .test.ts), with one embedding cache between them: each file reads its rows as red-team calls, then as
 * blue-team calls, and several heads read the same sets (the traps head reads sets G and Y, which the
 * configured head reads too), so a reading is embedded once in the process, whichever file asks first. The
 * cache's bound is stated here rather than taken from rules/guardrails.yaml, so that a smaller production
 * setting does not make them embed every row again: it holds every reading of every set and the public data
 * (about 7,000 distinct), at most about 28 MiB while the evaluations run.
 */
import { loadGuardrailsDoc } from '../../../src/guard/index.js';
import { EmbeddingCache } from '../../../src/guard/model/embedding-cache.js';
import { IntentModel, type IntentModelDoc } from '../../../src/guard/model/intent-model.js';
import { RULES_DIR } from './guardrails.js';

export const EVAL_CACHE_ENTRIES = 16_384;

const shared = new EmbeddingCache(EVAL_CACHE_ENTRIES);

/** A model of the configured intent section with `overrides` (a head, a threshold), reading through the shared cache. */
export function evalModel(overrides: Partial<IntentModelDoc> = {}): IntentModel {
  const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
  return new IntentModel({ ...doc.intentModel!, timeoutMs: 120_000, queue: 2_000, ...overrides }, { cache: shared });
}
