/**
 * The configured head (rules/guardrails-intent-head-traps.json, at threshold 0.69), adopted by the round after sets
 * G and Y: the recall head's setting with the evasive asks, the buried lines and the benign trap lines
 * (test/fixtures/guard/intent/evasive/) in the ask head, and a CSAM backstop (src/guard/model/head.ts): the recall
 * ask head's weights and thresholds, so a reading the recall head refuses as CSAM is refused as CSAM. The file must
 * be the one the trainer writes today (its inputs' hashes: corpus, encoder, gate lines, evasive lines, the recall
 * head it keeps as backstop). Read through the runtime as red-team calls, it loses no CSAM ask of sets G and Y that
 * the recall head refuses. docs/guardrails.md ("A CSAM backstop and benign traps") has the rule that judges it
 * (sets H and Z decide) and its figures.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { evasiveLines, gateLines, readCorpus } from '../../scripts/train-guard-intent.js';
import { encoderFiles } from '../../src/guard/model/encoder.js';
import { backstopsOf, type IntentHeadDoc } from '../../src/guard/model/head.js';
import { describeCsamKept } from './helpers/intent-eval.js';
import { RULES_DIR } from './helpers/guardrails.js';

const CANDIDATE = 'guardrails-intent-head-traps.json';
const THRESHOLD = 0.69;
/** INTENT_EVASIVE of the command that writes it (docs/guardrails.md). */
const EVASIVE = 'asks.tsv,buried.tsv,benign-traps.tsv';
const CONFIGURED = { head: 'guardrails-intent-head-recall.json', threshold: 0.7 };

describe('guard: the trap-lines candidate with a CSAM backstop', function () {
  this.timeout(900_000);
  const text = (f: string) => readFileSync(`${RULES_DIR}${f}`, 'utf8');
  const read = (f: string) => JSON.parse(text(f)) as IntentHeadDoc;

  it('is what the trainer writes today: this corpus, encoder, gate lines and evasive lines, the configured head as backstop', () => {
    const head = read(CANDIDATE);
    const configured = read(CONFIGURED.head);
    expect(head.corpusSha256).to.equal(readCorpus().sha256);
    expect(head.encoderSha256).to.equal(encoderFiles().sha256);
    expect(head.gate?.linesSha256).to.equal(gateLines().sha256);
    expect(head.extraLinesSha256).to.equal(evasiveLines(EVASIVE).sha256);
    expect(head.classThresholds).to.deep.equal({ csam: 0.5 });
    // The gate is the configured head's, weight for weight; the backstop is its ask head and thresholds.
    expect(head.gate).to.deep.equal(configured.gate);
    const [backstop, ...more] = backstopsOf(head);
    expect(more).to.deep.equal([]);
    expect(backstop?.sha256).to.equal(createHash('sha256').update(text(CONFIGURED.head)).digest('hex'));
    expect([backstop?.weights, backstop?.bias, backstop?.mean, backstop?.scale]).to.deep.equal([
      configured.weights,
      configured.bias,
      configured.mean,
      configured.scale,
    ]);
    expect([backstop?.threshold, backstop?.csamThreshold]).to.deep.equal([CONFIGURED.threshold, 0.5]);
  });

  describeCsamKept(
    { head: CANDIDATE, threshold: THRESHOLD },
    CONFIGURED,
    ['set-g', 'set-y'],
    110,
    'sets G and Y as red-team calls: refuses every CSAM ask the configured model refuses',
    'configured model',
  );
});
