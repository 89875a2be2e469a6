/**
 * The intent scorer on long texts, against its own definition: `IntentScorer.score` keeps a text's distinct
 * feature hashes in flat typed arrays (intent.ts `FeatureSet`, sized from the number of words and grown when
 * a text holds more distinct features than that), and sums their weights in the order first met. A text of
 * thousands of words, all different (every feature distinct, so the set grows several times), and one of
 * the clean corpus up to the scorer's word limit must score as the definition does: the feature strings
 * (`requestFeatures`), their hashes in a plain Set, the model's rows from a Map, scaled to unit length.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { ConceptMap, intentWords, loadIntentScorer, MAX_SCORED_WORDS, requestFeatures, type IntentModelDoc } from '../../src/guard/intent.js';
import { normalise } from '../../src/guard/normalise.js';
import { FIXTURES_DIR, RULES_DIR } from './helpers/guardrails.js';
import { referenceScorer } from './helpers/scorer-reference.js';

describe('guard: intent scorer on long texts', () => {
  const doc = JSON.parse(readFileSync(`${RULES_DIR}guardrails-intent.json`, 'utf8')) as IntentModelDoc;
  const scorer = loadIntentScorer('guardrails-intent.json');
  const referenceScore = referenceScorer(doc);
  const same = (words: readonly string[], label: string) => {
    const got = [...scorer.score(words)];
    const want = referenceScore(words);
    for (let c = 0; c < want.length; c++) expect(got[c], `${doc.classes[c]}: ${label}`).to.be.closeTo(want[c]!, 1e-12);
  };

  it('scores thousands of distinct words, every other one a concept word, as the model file defines it', () => {
    // Every word different, and every other one read as a concept, so the concepts' reading meets new
    // features and the words' features again. The set is sized for four features a word (rounded up to a
    // power of two, then half full); at these lengths the words' reading alone (five a word) makes it grow,
    // and the concepts' reading meets every feature of the unread words again after it has grown (a feature
    // lost in growing would be counted twice).
    const conceptWords = Object.keys(doc.concepts.words);
    expect(conceptWords.length).to.be.greaterThan(50);
    const concepts = new ConceptMap(doc.concepts);
    for (const n of [10, 256, 2_048, 8_192]) {
      const words = Array.from({ length: n }, (_, i) =>
        i % 2 === 1 ? conceptWords[(i >> 1) % conceptWords.length]! : `w${i.toString(36)}x${(i * 7919).toString(36)}`,
      );
      if (n >= 256) expect(new Set(requestFeatures(words, concepts)).size, `distinct features of ${n} words`).to.be.greaterThan(n * 5);
      same(words, `${n} distinct words`);
    }
  });

  it('scores the clean corpus read whole, up to the word limit, as the model file defines it', () => {
    const dir = `${FIXTURES_DIR}clean/`;
    const text = readdirSync(dir)
      .sort()
      .map((f) => readFileSync(dir + f, 'utf8'))
      .join('\n')
      .repeat(6);
    const words = intentWords(normalise(text).text);
    expect(words.length).to.equal(MAX_SCORED_WORDS);
    same(words, 'the clean corpus');
    same(words.slice(0, 700), 'its first 700 words');
  });
});
