/**
 * The candidates of the seventh round (docs/guardrails.md, "The candidates for sets M and S"): an ask head with one
 * hidden layer (INTENT_HIDDEN; two of them from three seeds, INTENT_HIDDEN_SEEDS) trained with the seventh round's two
 * blind files (test/fixtures/guard/intent/evasive/asks-blind5.tsv and benign-blind5.tsv) beside every earlier round's
 * lines, its class scores averaged with the configured ask head's (INTENT_ASK_AVERAGE, the linear scores kept as two
 * rectified units per class), the configured gate weight for weight, and the configured reading of requests of 400 to
 * 600 characters; two of them also keep the configured head as their CSAM backstop (head.ts), the first a CSAM
 * threshold of its own instead. Each must be the one the trainer writes today (its inputs' hashes: corpus, encoder,
 * gate, evasive lines, the head it is averaged with and backs up on). Sets M and S, which nobody here had read, decided
 * by the rule written before them: the second candidate was configured, until sets N and O, by the eighth round's rule,
 * replaced it (intent-round8.test.ts). Their CSAM checks against the sixth round's head are gone with the round: the
 * configured head is held to its own figures on every set (intent-independent.test.ts) and to the corpus's CSAM asks
 * (intent-model.test.ts).
 */
import { expect } from 'chai';
import { backstopsOf } from '../../src/guard/model/head.js';
import { expectHiddenHeadAsWritten, headSha256, type HiddenCandidate, readHead } from './helpers/hidden-head.js';

/** INTENT_EVASIVE of the commands that write them (docs/guardrails.md): the sixth round's lines and the seventh's blind files. */
const EVASIVE =
  'asks-blind.tsv,asks.tsv,benign-blind.tsv,buried.tsv,benign-traps.tsv,asks-blind2.tsv,benign-blind2.tsv,asks-blind3.tsv,benign-blind3.tsv,asks-blind4.tsv,benign-blind4.tsv,asks-blind5.tsv,benign-blind5.tsv';
/** The head configured when they were built: the one the candidates are held against, averaged with, backed up on and take their gate from. */
const CONFIGURED = { head: 'guardrails-intent-head-r6-sentences-csam.json', threshold: 0.74 };
/** The candidates: hidden units, INTENT_ASK_AVERAGE's weight, the threshold and class thresholds they were written at. */
const CANDIDATES: Array<HiddenCandidate & { backstop: boolean }> = [
  { file: 'guardrails-intent-head-r7-hidden.json', units: 32, seeds: 3, weight: 0.5, threshold: 0.74, classThresholds: { csam: 0.2 }, backstop: false },
  { file: 'guardrails-intent-head-r7-hidden-backstop.json', units: 32, seeds: 3, weight: 0.5, threshold: 0.78, backstop: true },
  { file: 'guardrails-intent-head-r7-hidden64-backstop.json', units: 64, seeds: 1, weight: 0.3, threshold: 0.8, backstop: true },
];
for (const candidate of CANDIDATES) {
  const { file: CANDIDATE, units, seeds, weight, backstop } = candidate;
  describe(`guard: the seventh round candidate ${CANDIDATE}, a hidden layer of ${units}${seeds > 1 ? ` from ${seeds} seeds` : ''} trained on the fifth blind files${backstop ? ', the configured head as CSAM backstop' : ''}`, function () {
    this.timeout(120_000);

    it(`is what the trainer writes today: this corpus, encoder and evasive lines, averaged with the configured ask head (${weight}), the configured gate and reading${backstop ? ', the configured head as CSAM backstop' : ', no backstop'}`, () => {
      const head = expectHiddenHeadAsWritten(candidate, { evasive: EVASIVE, averagedWith: CONFIGURED.head, beside: CONFIGURED.head });
      expect(backstopsOf(head).map((b) => [b.from, b.sha256, b.threshold, b.csamThreshold])).to.deep.equal(
        backstop ? [[CONFIGURED.head, headSha256(CONFIGURED.head), CONFIGURED.threshold, readHead(CONFIGURED.head).classThresholds!.csam]] : [],
      );
    });
  });
}
