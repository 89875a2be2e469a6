/**
 * The intent head's arithmetic (src/guard/model/head.ts) without the encoder: the logistic form and the
 * optional hidden layer give the probabilities their weights say, and a head whose hidden layer does not fit
 * its inputs is refused when loaded rather than read wrongly.
 */
import { expect } from 'chai';
import { HEAD_FEATURES, IntentHead, softmaxScores, type IntentHeadDoc } from '../../src/guard/model/head.js';

const base = (over: Partial<IntentHeadDoc>): IntentHeadDoc => ({
  features: HEAD_FEATURES,
  encoderSha256: 'e',
  corpusSha256: 'c',
  classes: ['benign', 'cbrn'],
  conceptNames: [],
  concepts: { words: {}, prefixes: {} },
  dim: 2,
  mean: [1, 0],
  scale: [2, 1],
  weights: [
    [0, 0],
    [1, -1],
  ],
  bias: [0, 0],
  ...over,
});

const softmax2 = (z0: number, z1: number) => [Math.exp(z0) / (Math.exp(z0) + Math.exp(z1)), Math.exp(z1) / (Math.exp(z0) + Math.exp(z1))];

describe('guard: intent head arithmetic', () => {
  it('logistic head: standardises the inputs, then one weighted sum per class', () => {
    // x = (3, 2) standardised = ((3-1)/2, 2) = (1, 2); z = (0, 1 - 2) = (0, -1)
    const p = softmaxScores(Float64Array.from([3, 2]), base({}));
    const want = softmax2(0, -1);
    expect(p[0]).to.be.closeTo(want[0]!, 1e-12);
    expect(p[1]).to.be.closeTo(want[1]!, 1e-12);
  });

  it('hidden layer: rectified units over the standardised inputs feed the class weights', () => {
    // u = (1, 2); h = (max(0, 1 + 2 - 0.5), max(0, -1 - 2)) = (2.5, 0); z = (0, 2 * 2.5 + 7 * 0 - 1) = (0, 4)
    const doc = base({
      hidden: {
        weights: [
          [1, 1],
          [-1, -1],
        ],
        bias: [-0.5, 0],
      },
      weights: [
        [0, 0],
        [2, 7],
      ],
      bias: [0, -1],
    });
    const head = new IntentHead(doc);
    const p = head.probabilities(Float64Array.from([3, 2]));
    const want = softmax2(0, 4);
    expect(p[0]).to.be.closeTo(want[0]!, 1e-12);
    expect(p[1]).to.be.closeTo(want[1]!, 1e-12);
  });

  it('refuses a head whose hidden layer does not fit its inputs or whose class weights do not read its units', () => {
    expect(() => new IntentHead(base({ hidden: { weights: [[1, 1, 1]], bias: [0] } }))).to.throw(/hidden weights do not agree/);
    expect(() => new IntentHead(base({ hidden: { weights: [[1, 1]], bias: [0, 0] } }))).to.throw(/hidden weights do not agree/);
    expect(
      () =>
        new IntentHead(
          base({
            hidden: {
              weights: [
                [1, 1],
                [1, 1],
                [1, 1],
              ],
              bias: [0, 0, 0],
            },
          }),
        ),
    ).to.throw(/do not agree with dim/);
  });
});
