/**
 * A narrowed CSAM backstop (scripts/train-guard-intent.ts, INTENT_CSAM_BACKSTOP_AT; docs/guardrails.md, "The candidates
 * for sets N and O"): the kept head refuses as CSAM only a reading whose CSAM probability reaches the given level, so a
 * protective prompt about children that the kept head read as partly CSAM (between its own CSAM threshold and that
 * level) is no longer refused through it, and an ask it reads as plainly CSAM still is.
 */
import { expect } from 'chai';
import { narrowed } from '../../scripts/train-guard-intent.js';
import { HEAD_FEATURES, IntentHead, type BackstopDoc, type IntentHeadDoc } from '../../src/guard/model/head.js';

const CLASSES = ['benign', 'cbrn', 'csam', 'fraud'];

/** A backstop over a one-number input whose class scores are chosen by that number: x = 1 reads p(csam) of `csam`. */
function backstop(csam: number): BackstopDoc {
  // Logits for benign and csam that give p(csam) = csam when the two other classes are negligible.
  const l = Math.log(csam / (1 - csam));
  return {
    from: 'kept.json',
    sha256: '0'.repeat(64),
    mean: [0],
    scale: [1],
    weights: [[0], [0], [l], [0]],
    bias: [0, -40, 0, -40],
    threshold: 0.74,
    csamThreshold: 0.33,
  };
}

/** A head that reads everything as benign, with `b` as its backstop and no gate (every reading passes). */
function head(b: BackstopDoc): IntentHead {
  const doc: IntentHeadDoc = {
    features: HEAD_FEATURES,
    encoderSha256: '',
    corpusSha256: '',
    classes: CLASSES,
    conceptNames: [],
    concepts: { words: {}, prefixes: {} },
    dim: 1,
    mean: [0],
    scale: [1],
    weights: [[0], [0], [0], [0]],
    bias: [40, 0, 0, 0],
    backstop: b,
  } as unknown as IntentHeadDoc;
  return new IntentHead(doc);
}

const one = Float64Array.from([1]);

describe('guard: a CSAM backstop narrowed to a CSAM probability (INTENT_CSAM_BACKSTOP_AT)', () => {
  it('keeps the head it backs up on as it is when unset', () => {
    expect(narrowed(backstop(0.5), undefined)).to.deep.equal(backstop(0.5));
  });

  it('refuses as CSAM a reading the kept head reads at 0.5 CSAM only while unnarrowed, and one at 0.9 either way', () => {
    expect(head(backstop(0.5)).backstopCsam(one)).to.equal(true);
    expect(head(narrowed(backstop(0.5), '0.7')).backstopCsam(one)).to.equal(false);
    expect(head(narrowed(backstop(0.9), '0.7')).backstopCsam(one)).to.equal(true);
  });

  it('records the level as the CSAM threshold and never refuses by harm alone', () => {
    const b = narrowed(backstop(0.5), '0.7');
    expect([b.csamThreshold, b.threshold]).to.deep.equal([0.7, 1]);
  });

  it('refuses a level below the kept head’s own CSAM threshold or outside (0, 1]', () => {
    for (const at of ['0.2', '0', '1.5', 'x']) expect(() => narrowed(backstop(0.5), at), at).to.throw(/INTENT_CSAM_BACKSTOP_AT/);
  });
});
