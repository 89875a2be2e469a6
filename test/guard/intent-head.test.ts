/**
 * The intent head's arithmetic (src/guard/model/head.ts) without the encoder: the logistic form and the
 * optional hidden layer give the probabilities their weights say, and a head whose hidden layer does not fit
 * its inputs is refused when loaded rather than read wrongly; the neighbours' share of asks moves a
 * reading's harm toward the training readings it is closest to; the topic gate passes a reading only when its
 * probability of a blocked topic reaches the threshold of the reading's harm class (CSAM's when CSAM holds a
 * fifth of it), and a head without a gate lets every reading pass; class thresholds name the harm classes whose
 * own probability reaches them, and a head without them names none; a CSAM backstop refuses as CSAM what the head it
 * was copied from refuses as CSAM (its gate, its CSAM threshold, its harm threshold with CSAM first or second), and
 * nothing else, and a list of backstops what any of them refuses as CSAM.
 */
import { expect } from 'chai';
import {
  CSAM_SECOND,
  HEAD_FEATURES,
  IntentHead,
  Neighbours,
  softmaxScores,
  type BackstopDoc,
  type GateDoc,
  type IntentHeadDoc,
} from '../../src/guard/model/head.js';

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

/** Four classes (benign and the three harm classes) with weights and biases of zero: the probabilities are even. */
const FOUR = {
  classes: ['benign', 'cbrn', 'csam', 'fraud'],
  weights: [
    [0, 0],
    [0, 0],
    [0, 0],
    [0, 0],
  ],
  bias: [0, 0, 0, 0],
};

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

  it('neighbours: the harm mixes the regression with the weighted share of asks among the nearest training readings', () => {
    const unit = (a: number) => [Math.cos(a), Math.sin(a)];
    // Two asks near angle 0, two benign readings near angle pi/2.
    const neighbours = Neighbours.encode(
      [
        { e: unit(0), ask: true },
        { e: unit(0.1), ask: true },
        { e: unit(Math.PI / 2), ask: false },
        { e: unit(Math.PI / 2 - 0.1), ask: false },
      ],
      { k: 2, tau: 0.05, mix: 0.5, keep: [] },
    );
    const head = new IntentHead(base({ neighbours }));
    const p = Float64Array.from([0.4, 0.6]);
    // Near the asks: both neighbours are asks, harm = 0.5 * 0.6 + 0.5 * 1.
    expect(head.harm(p, unit(0.05))).to.be.closeTo(0.8, 1e-9);
    // Near the benign readings: 0.5 * 0.6 + 0.5 * 0.
    expect(head.harm(p, unit(Math.PI / 2 - 0.05))).to.be.closeTo(0.3, 1e-9);
    // Between them, nearer the asks: the closer neighbour weighs more (k = 2: one ask, one benign).
    const mid = head.harm(p, unit(0.75));
    expect(mid).to.be.above(0.55).and.below(0.8);
    // A reading whose regression score cannot reach the floor whatever its neighbours is not compared.
    expect(head.harm(Float64Array.from([0.9, 0.1]), unit(0.05), 0.7)).to.be.closeTo(0.05, 1e-9);
    // A kept class (CSAM) is never pulled below the regression's score by benign neighbours.
    const kept = new IntentHead(base({ classes: ['benign', 'csam'], neighbours: { ...neighbours, keep: ['csam'] } }));
    expect(kept.harm(p, unit(Math.PI / 2 - 0.05))).to.be.closeTo(0.6, 1e-9);
    expect(kept.harm(p, unit(0.05))).to.be.closeTo(0.8, 1e-9);
    // Without neighbours the harm is the probability of not benign.
    expect(new IntentHead(base({})).harm(p, unit(0))).to.be.closeTo(0.6, 1e-12);
  });

  it('refuses neighbours whose vectors do not fit the head', () => {
    const neighbours = Neighbours.encode([{ e: [1, 0, 0], ask: true }], { k: 1, tau: 0.05, mix: 0.5, keep: [] });
    expect(() => new IntentHead(base({ neighbours }))).to.throw(/neighbours do not agree/);
  });

  it('topic gate: a logistic score over the standardised input, passed per harm class, CSAM at its own threshold', () => {
    const gate: GateDoc = {
      mean: [1, 0],
      scale: [2, 1],
      weights: [
        [0, 0],
        [1, -1],
      ],
      bias: [0, 0.5],
      thresholds: { cbrn: 0.5, csam: 0.1, fraud: 0.5 },
      linesSha256: 'g',
    };
    const head = new IntentHead(
      base({
        ...FOUR,
        gate,
      }),
    );
    // x = (3, 2): u = (1, 2), z = (0, 1 - 2 + 0.5) = (0, -0.5)
    const x = Float64Array.from([3, 2]);
    expect(head.topic(x)).to.be.closeTo(1 / (1 + Math.exp(0.5)), 1e-12);
    // 0.378 is below cbrn's and fraud's 0.5 but above CSAM's 0.1.
    expect(head.gatePasses(Float64Array.from([0.1, 0.8, 0.05, 0.05]), x)).to.equal(false);
    expect(head.gatePasses(Float64Array.from([0.1, 0.05, 0.8, 0.05]), x)).to.equal(true);
    // CSAM's threshold applies as soon as CSAM holds CSAM_SECOND of the probability, whatever the top class.
    expect(head.gatePasses(Float64Array.from([0.1, 0.9 - CSAM_SECOND, CSAM_SECOND, 0]), x)).to.equal(true);
    expect(head.gatePasses(Float64Array.from([0.1, 0.9 - CSAM_SECOND + 0.01, CSAM_SECOND - 0.01, 0]), x)).to.equal(false);
    // x = (1, -1): u = (0, -1), z = (0, 1.5): on topic, passes for every class.
    expect(head.gatePasses(Float64Array.from([0.1, 0.8, 0.05, 0.05]), Float64Array.from([1, -1]))).to.equal(true);
    // A reading whose words hold a term of the gate's topic concepts passes whatever its score.
    const named = new IntentHead(
      base({
        ...FOUR,
        concepts: { words: { sarin: 'topic-cbrn', recipe: 'ask-how' }, prefixes: {} },
        gate: { ...gate, topicConcepts: ['topic-cbrn'] },
      }),
    );
    const cbrn = Float64Array.from([0.1, 0.8, 0.05, 0.05]);
    expect(named.gatePasses(cbrn, x, ['a', 'sarin', 'question'])).to.equal(true);
    expect(named.gatePasses(cbrn, x, ['a', 'recipe', 'question'])).to.equal(false);
    expect(named.gatePasses(cbrn, x)).to.equal(false);
    // Without a gate every reading passes and its topic is 1.
    const plain = new IntentHead(base({}));
    expect(plain.topic(x)).to.equal(1);
    expect(plain.gatePasses(Float64Array.from([0.1, 0.9]), x)).to.equal(true);
  });

  it('refuses a gate that does not fit the head or lacks a harm class threshold', () => {
    const gate: GateDoc = {
      mean: [0, 0],
      scale: [1, 1],
      weights: [
        [0, 0],
        [1, 1],
      ],
      bias: [0, 0],
      thresholds: { cbrn: 0.5 },
      linesSha256: 'g',
    };
    expect(
      () =>
        new IntentHead(
          base({
            gate: {
              ...gate,
              weights: [
                [0, 0],
                [1, 1, 1],
              ],
            },
          }),
        ),
    ).to.throw(/gate weights, mean and scale do not agree/);
    expect(() => new IntentHead(base({ gate: { ...gate, weights: [[1, 1]] } }))).to.throw(/gate weights, mean and scale do not agree/);
    expect(() => new IntentHead(base({ gate: { ...gate, hidden: { weights: [[1, 1, 1]], bias: [0] } } }))).to.throw(
      /gate weights, mean and scale do not agree/,
    );
    expect(() => new IntentHead(base({ gate: { ...gate, thresholds: {} } }))).to.throw(/gate threshold of cbrn/);
    expect(() => new IntentHead(base({ gate: { ...gate, thresholds: { cbrn: 1.5 } } }))).to.throw(/gate threshold of cbrn/);
    expect(() => new IntentHead(base({ gate }))).not.to.throw();
  });

  it('class thresholds: a harm class whose probability reaches its own threshold is named; without them, none is', () => {
    const head = new IntentHead(base({ ...FOUR, classThresholds: { csam: 0.3 } }));
    expect(head.classesAtFloor(Float64Array.from([0.6, 0.05, 0.3, 0.05]))).to.deep.equal([2]);
    expect(head.classesAtFloor(Float64Array.from([0.6, 0.11, 0.29, 0]))).to.deep.equal([]);
    // Only the classes given a threshold: a fraud probability of 0.4 names nothing.
    expect(head.classesAtFloor(Float64Array.from([0.6, 0, 0, 0.4]))).to.deep.equal([]);
    expect(new IntentHead(base(FOUR)).classesAtFloor(Float64Array.from([0.01, 0, 0.99, 0]))).to.deep.equal([]);
  });

  it('refuses class thresholds for a class the head does not hold as harm, or out of (0, 1]', () => {
    expect(() => new IntentHead(base({ classThresholds: { csam: 0.3 } }))).to.throw(/class threshold for "csam"/);
    expect(() => new IntentHead(base({ classThresholds: { benign: 0.3 } }))).to.throw(/class threshold for "benign"/);
    expect(() => new IntentHead(base({ classThresholds: { cbrn: 0 } }))).to.throw(/class threshold of cbrn out of/);
    expect(() => new IntentHead(base({ classThresholds: { cbrn: 1.2 } }))).to.throw(/class threshold of cbrn out of/);
    expect(() => new IntentHead(base({ classThresholds: { cbrn: 0.4 } }))).not.to.throw();
  });

  it('CSAM backstop: refuses as CSAM what the head it was copied from refuses as CSAM, and nothing else', () => {
    // The backstop's classes read x0 as CSAM and x1 as CBRN; the head's own weights are all zero (even probabilities).
    const backstop: BackstopDoc = {
      from: 'h.json',
      sha256: 's',
      mean: [0, 0],
      scale: [1, 1],
      weights: [
        [0, 0],
        [0, 1],
        [1, 0],
        [0, 0],
      ],
      bias: [0, 0, 0, 0],
      threshold: 0.7,
      csamThreshold: 0.6,
    };
    const head = new IntentHead(base({ ...FOUR, mean: [0, 0], scale: [1, 1], backstop }));
    // x = (2, 0): P(csam) = e^2 / (3 + e^2) = 0.71, at its CSAM threshold.
    expect(head.backstopCsam(Float64Array.from([2, 0]))).to.equal(true);
    // x = (0.5, 0): P(csam) = 0.35, below it; harm 0.78 reaches 0.7 with CSAM the most probable harm class.
    expect(head.backstopCsam(Float64Array.from([0.5, 0]))).to.equal(true);
    // x = (0, 2): harm 0.90, but CBRN first and CSAM below CSAM_SECOND: not a CSAM refusal of that head.
    expect(head.backstopCsam(Float64Array.from([0, 2]))).to.equal(false);
    // x = (-3, 0): harm 0.67, below 0.7.
    expect(head.backstopCsam(Float64Array.from([-3, 0]))).to.equal(false);
    // Its gate is the head's: a reading the gate turns away is not refused, however CSAM reads.
    const gate: GateDoc = {
      mean: [0, 0],
      scale: [1, 1],
      weights: [
        [0, 0],
        [0, 0],
      ],
      bias: [0, -10],
      thresholds: { cbrn: 0.1, csam: 0.02, fraud: 0.1 },
      linesSha256: 'g',
    };
    const gated = new IntentHead(base({ ...FOUR, mean: [0, 0], scale: [1, 1], backstop, gate }));
    expect(gated.backstopCsam(Float64Array.from([2, 0]))).to.equal(false);
    expect(
      new IntentHead(base({ ...FOUR, mean: [0, 0], scale: [1, 1], backstop, gate: { ...gate, bias: [0, 10] } })).backstopCsam(Float64Array.from([2, 0])),
    ).to.equal(true);
    // Without a backstop nothing is refused by it.
    expect(new IntentHead(base({ ...FOUR, mean: [0, 0], scale: [1, 1] })).backstopCsam(Float64Array.from([2, 0]))).to.equal(false);
  });

  it('CSAM backstops, a list: refuses as CSAM what any of the heads refuses as CSAM, each at its own thresholds', () => {
    // The first reads x0 as CSAM, the second x1 as CSAM; a head that kept the first as its backstop and is now kept
    // as a backstop itself holds both.
    const first: BackstopDoc = {
      from: 'a.json',
      sha256: 'a',
      mean: [0, 0],
      scale: [1, 1],
      weights: [
        [0, 0],
        [0, 0],
        [1, 0],
        [0, 0],
      ],
      bias: [0, 0, 0, 0],
      threshold: 0.95,
      csamThreshold: 0.6,
    };
    const second: BackstopDoc = {
      ...first,
      from: 'b.json',
      sha256: 'b',
      weights: [
        [0, 0],
        [0, 0],
        [0, 1],
        [0, 0],
      ],
      csamThreshold: 0.8,
    };
    const both = new IntentHead(base({ ...FOUR, mean: [0, 0], scale: [1, 1], backstop: [first, second] }));
    expect(both.backstops.map((b) => b.from)).to.deep.equal(['a.json', 'b.json']);
    // x = (2, 0): P(csam) 0.71 for the first (>= 0.6): refused, whatever the second reads.
    expect(both.backstopCsam(Float64Array.from([2, 0]))).to.equal(true);
    // x = (0, 3): P(csam) 0.87 for the second (>= 0.8): refused; the first alone would not.
    expect(both.backstopCsam(Float64Array.from([0, 3]))).to.equal(true);
    expect(new IntentHead(base({ ...FOUR, mean: [0, 0], scale: [1, 1], backstop: [first] })).backstopCsam(Float64Array.from([0, 3]))).to.equal(false);
    // x = (0, 2): the second's P(csam) 0.71 is below its own 0.8 (the first's 0.6 does not apply to it), its harm 0.90
    // below 0.95: not refused.
    expect(both.backstopCsam(Float64Array.from([0, 2]))).to.equal(false);
    // An empty list is no backstop; each entry is checked as a single one is.
    expect(new IntentHead(base({ ...FOUR, mean: [0, 0], scale: [1, 1], backstop: [] })).backstopCsam(Float64Array.from([2, 0]))).to.equal(false);
    expect(() => new IntentHead(base({ ...FOUR, mean: [0, 0], scale: [1, 1], backstop: [first, { ...second, threshold: 0 }] }))).to.throw(
      /backstop thresholds/,
    );
  });

  it('refuses a backstop that does not fit the head, lacks a CSAM class or holds a threshold out of (0, 1]', () => {
    const backstop: BackstopDoc = {
      from: 'h.json',
      sha256: 's',
      mean: [0, 0],
      scale: [1, 1],
      weights: FOUR.weights,
      bias: FOUR.bias,
      threshold: 0.7,
      csamThreshold: 0.5,
    };
    expect(() => new IntentHead(base({ ...FOUR, backstop: { ...backstop, weights: FOUR.weights.slice(1) } }))).to.throw(/backstop weights/);
    expect(() => new IntentHead(base({ ...FOUR, backstop: { ...backstop, mean: [0] } }))).to.throw(/backstop weights/);
    expect(() => new IntentHead(base({ backstop: { ...backstop, weights: FOUR.weights.slice(0, 2), bias: [0, 0] } }))).to.throw(/needs a csam class/);
    expect(() => new IntentHead(base({ ...FOUR, backstop: { ...backstop, csamThreshold: 0 } }))).to.throw(/backstop thresholds/);
    expect(() => new IntentHead(base({ ...FOUR, backstop }))).not.to.throw();
  });
});
