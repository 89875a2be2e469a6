/**
 * The embedding cache of the intent model the evaluations build (intent-{independent,public,benign-public}
 * .test.ts), stated here rather than taken from rules/guardrails.yaml so that a smaller production setting
 * does not make them embed every row twice. Each test file reads its rows as red-team calls, then as
 * blue-team calls, with one model: a cache that holds every reading of its largest set (about 1,000: the
 * public everyday requests; set H reads 576) answers every blue-team read. 4,096 entries are at most about
 * 7 MiB, held while the file runs.
 */
export const EVAL_CACHE_ENTRIES = 4096;
