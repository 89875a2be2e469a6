/**
 * The intent scorer's fast path against its own definition. `IntentScorer.score` hashes a request's words
 * into features and looks their weights up in a flat open-addressing table built once from the model file.
 * The model is defined on feature strings (`requestFeatures`: words, bigrams and skip-pairs of the words and
 * of their concepts), each with a row of weights, where features sharing a hash would share one row (their
 * weights summed): the distinct hashes' rows are summed, scaled to unit length and put through a softmax.
 * Every text of the labelled corpus must score the same both ways, and a hand-made model checks the
 * table's edge cases (a feature the model lacks, a text with no feature, rows of the wrong length). The
 * hash is wide enough that no feature of the corpus's texts, the external authors' and candidate files and
 * the development set reads a row of another feature (with the former 32-bit hash, `exactly ~ precursors`
 * read the weights of `can ~ of`).
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { readCorpus, readTsv } from '../../scripts/train-guard-intent.js';
import {
  ConceptMap,
  FEATURE_SET,
  featureHash,
  IntentScorer,
  intentWords,
  loadIntentScorer,
  requestFeatures,
  type IntentModelDoc,
} from '../../src/guard/intent.js';
import { normalise } from '../../src/guard/normalise.js';
import { RULES_DIR } from './helpers/guardrails.js';
import { referenceScorer } from './helpers/scorer-reference.js';

/** The model as written: feature strings, their hashes' rows in a plain Map, no table. */
const reference = referenceScorer;

describe('guard: intent scorer', () => {
  it('scores every text of the corpus as the model file defines it', () => {
    const doc = JSON.parse(readFileSync(`${RULES_DIR}guardrails-intent.json`, 'utf8')) as IntentModelDoc;
    const scorer = loadIntentScorer('guardrails-intent.json');
    const referenceScore = reference(doc);
    const { examples } = readCorpus();
    expect(examples.length).to.be.greaterThan(400);
    for (const { text } of examples) {
      const words = intentWords(text);
      const got = [...scorer.score(words)];
      const want = referenceScore(words);
      for (let c = 0; c < want.length; c++) expect(got[c], `${doc.classes[c]} of: ${text}`).to.be.closeTo(want[c]!, 1e-12);
    }
  });

  it('reads a small model: known and unknown features, an empty text, rows of the wrong length', () => {
    const doc: IntentModelDoc = {
      features: FEATURE_SET,
      corpusSha256: '',
      concepts: { words: { brew: 'ask-make' }, prefixes: {} },
      classes: ['benign', 'harmful'],
      bias: [0.5, -0.5],
      weights: { 'ask-make': [-1, 2], 'ask-make ~ sarin': [-2, 4], sarin: [0, 1.5], history: [3, -3] },
    };
    const scorer = new IntentScorer(doc);
    const referenceScore = reference(doc);
    for (const words of [['brew', 'some', 'sarin'], ['the', 'history', 'of', 'sarin'], ['nothing', 'known'], []]) {
      const got = [...scorer.score(words)];
      const want = referenceScore(words);
      expect(got[0]).to.be.closeTo(want[0]!, 1e-15);
      expect(got[1]).to.be.closeTo(want[1]!, 1e-15);
    }
    expect(scorer.score(['brew', 'some', 'sarin'])[1]).to.be.greaterThan(0.9);
    expect(scorer.score(['the', 'history', 'of', 'sarin'])[0]).to.be.greaterThan(0.9);
    // No known feature: the bias alone.
    expect([...scorer.score(['nothing', 'known'])]).to.deep.equal(reference({ ...doc, weights: {} })([]));
    expect(() => new IntentScorer({ ...doc, weights: { sarin: [1] } })).to.throw(/feature "sarin" has 1 weights/);
  });

  it('gives no feature of the labelled texts the weights of another feature', () => {
    // The pair the 32-bit hash confused: a model that knows only `can ~ of` leaves `exactly ~ precursors` at the bias.
    const small: IntentModelDoc = {
      features: FEATURE_SET,
      corpusSha256: '',
      concepts: { words: {}, prefixes: {} },
      classes: ['benign', 'harmful'],
      bias: [0.5, -0.5],
      weights: { 'can ~ of': [-6, 6] },
    };
    const biasOnly = reference({ ...small, weights: {} })([]);
    expect([...new IntentScorer(small).score(['exactly', 'the', 'precursors'])]).to.deep.equal(biasOnly);
    expect(new IntentScorer(small).score(['can', 'some', 'of'])[1]).to.be.greaterThan(0.9);
    // Every feature of every labelled text against the committed model's features.
    const doc = JSON.parse(readFileSync(`${RULES_DIR}guardrails-intent.json`, 'utf8')) as IntentModelDoc;
    const modelHash = new Map<number, string>();
    for (const f of Object.keys(doc.weights)) {
      const other = modelHash.get(featureHash(f));
      expect(other, `model features ${f} and ${other} share a hash`).to.equal(undefined);
      modelHash.set(featureHash(f), f);
    }
    const texts = readCorpus().examples.map((e) => e.text);
    for (const dir of ['intent-external', 'intent-candidates', 'intent-dev']) {
      const at = `${RULES_DIR}../test/fixtures/guard/${dir}/`;
      for (const f of readdirSync(at).filter((n) => n.startsWith('train-') || /^(author-\d+|dev)\.tsv$/.test(n)))
        texts.push(...readTsv(at + f, f).map((e) => e.text));
    }
    expect(texts.length).to.be.greaterThan(3_000);
    const concepts = new ConceptMap(doc.concepts);
    const confused: string[] = [];
    for (const text of texts)
      for (const f of requestFeatures(intentWords(normalise(text).text), concepts)) {
        const m = modelHash.get(featureHash(f));
        if (m !== undefined && m !== f) confused.push(`${f} -> ${m}`);
      }
    expect(confused).to.deep.equal([]);
  });
});
