/**
 * The word scorer as its model file defines it, for the tests that hold `IntentScorer.score` to it: feature
 * strings (`requestFeatures`), their hashes' rows summed in a plain Map (features sharing a hash share one
 * row), the text's distinct hashes in a plain Set, scaled to unit length and put through a softmax. No table,
 * no typed arrays: what the fast path must agree with.
 */
import { ConceptMap, featureHash, requestFeatures, type IntentModelDoc } from '../../../src/guard/intent.js';

export function referenceScorer(doc: IntentModelDoc): (words: readonly string[]) => number[] {
  const rows = new Map<number, number[]>();
  for (const [f, w] of Object.entries(doc.weights)) {
    const h = featureHash(f);
    const row = rows.get(h);
    rows.set(h, row ? row.map((x, c) => x + w[c]!) : [...w]);
  }
  const concepts = new ConceptMap(doc.concepts);
  return (words) => {
    const hashes = new Set([...requestFeatures(words, concepts)].map(featureHash));
    const z = [...doc.bias];
    const scale = hashes.size > 0 ? 1 / Math.sqrt(hashes.size) : 0;
    for (const h of hashes) {
      const w = rows.get(h);
      if (w) for (let c = 0; c < z.length; c++) z[c]! += w[c]! * scale;
    }
    const max = Math.max(...z);
    const e = z.map((x) => Math.exp(x - max));
    const sum = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / sum);
  };
}
