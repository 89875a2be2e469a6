/**
 * The candidates of the eighth round (docs/guardrails.md, "The candidates for sets N and O"): the seventh round's ask
 * head (one hidden layer of 32 units from three seeds, its class scores averaged with the sixth round's linear ask head,
 * INTENT_ASK_AVERAGE) trained with the eighth round's two blind files (test/fixtures/guard/intent/evasive/
 * asks-blind6.tsv and benign-blind6.tsv: CSAM asks worded close to protective prompts about children, and those prompts)
 * beside every earlier round's lines, the configured gate weight for weight and the configured reading of requests of
 * 400 to 600 characters. They decide CSAM by a CSAM threshold of their own; one keeps the sixth round's head as a CSAM
 * backstop narrowed to what it reads as plainly CSAM (INTENT_CSAM_BACKSTOP_AT), not every reading it refused as CSAM,
 * which kept the configured head refusing protective prompts about children. Each must be the one the trainer writes
 * today (its inputs' hashes: corpus, encoder, gate, evasive lines, the head it is averaged with and backs up on). Sets N
 * and O, which nobody here had read, decided by the rule written before them: the second candidate is configured
 * (docs/guardrails.md, "Sets N and O, scored once"). While the round was open each was also held, through the runtime, to
 * at least as many CSAM asks of the looked-at sets (A to M and S to Z) as the head configured then, on both teams, and to
 * every CSAM ask of the corpus it refused; with the round decided those checks are retired: the configured head is held
 * to its own figures on every set (intent-independent.test.ts) and to the corpus's CSAM asks (intent-model.test.ts).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { backstopsOf, type IntentHeadDoc } from '../../src/guard/model/head.js';
import { loadGuardrailsDoc } from '../../src/guard/index.js';
import { RULES_DIR } from './helpers/guardrails.js';
import { expectHiddenHeadAsWritten, headSha256, type HiddenCandidate } from './helpers/hidden-head.js';

/** INTENT_EVASIVE of the commands that write them (docs/guardrails.md): the seventh round's lines and the eighth's blind files. */
const EVASIVE =
  'asks-blind.tsv,asks.tsv,benign-blind.tsv,buried.tsv,benign-traps.tsv,asks-blind2.tsv,benign-blind2.tsv,asks-blind3.tsv,benign-blind3.tsv,asks-blind4.tsv,benign-blind4.tsv,asks-blind5.tsv,benign-blind5.tsv,asks-blind6.tsv,benign-blind6.tsv';
/** The head configured when they were built: the one the candidates were held against, and whose gate and reading they keep. */
const CONFIGURED = { head: 'guardrails-intent-head-r7-hidden-backstop.json', threshold: 0.78 };
/** The linear ask head their scores are averaged with (INTENT_ASK_AVERAGE), as the configured head's are. */
const AVERAGED = 'guardrails-intent-head-r6-sentences-csam.json';
/** The candidates: hidden units, seeds, INTENT_ASK_AVERAGE's weight, the thresholds they were written at, any backstop and its level. */
const CANDIDATES: Array<HiddenCandidate & { backstop?: { from: string; at: number } }> = [
  { file: 'guardrails-intent-head-r8-hidden.json', units: 32, seeds: 3, weight: 0.5, threshold: 0.74, classThresholds: { csam: 0.3 } },
  { file: 'guardrails-intent-head-r8-hidden-csam.json', units: 32, seeds: 3, weight: 0.5, threshold: 0.74, classThresholds: { csam: 0.23 } },
  {
    file: 'guardrails-intent-head-r8-hidden-backstop.json',
    units: 32,
    seeds: 3,
    weight: 0.5,
    threshold: 0.74,
    classThresholds: { csam: 0.23 },
    backstop: { from: AVERAGED, at: 0.5 },
  },
];
/** Adopted by sets N and O under the eighth round's rule (docs/guardrails.md, "Sets N and O, scored once"). */
const ADOPTED = CANDIDATES[1]!;

describe('guard: the eighth round adopted its second candidate', () => {
  it('rules/guardrails.yaml names guardrails-intent-head-r8-hidden-csam.json at the threshold it was written at', () => {
    const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
    expect([doc.intentModel?.head, doc.intentModel?.threshold]).to.deep.equal([ADOPTED.file, ADOPTED.threshold]);
  });
});

describe('guard: the eighth round candidates share one ask head (INTENT_ASK_FROM wrote the second and third from the first)', () => {
  it('holds the same hidden layer, output weights and standardisation in each file', () => {
    const ask = (f: string) => {
      const h = JSON.parse(readFileSync(`${RULES_DIR}${f}`, 'utf8')) as IntentHeadDoc;
      return [h.mean, h.scale, h.hidden, h.weights, h.bias];
    };
    const [first, ...rest] = CANDIDATES.map((c) => ask(c.file));
    for (const other of rest) expect(other).to.deep.equal(first);
  });
});

for (const candidate of CANDIDATES) {
  const { file: CANDIDATE, units, seeds, weight, backstop } = candidate;
  describe(`guard: the eighth round candidate ${CANDIDATE}, a hidden layer of ${units}${seeds > 1 ? ` from ${seeds} seeds` : ''} trained on the sixth blind files${backstop ? `, a CSAM backstop from ${backstop.at}` : ''}`, function () {
    this.timeout(120_000);

    it(`is what the trainer writes today: this corpus, encoder and evasive lines, averaged with the sixth round's ask head (${weight}), the configured gate and reading${backstop ? `, the sixth round's head as CSAM backstop from ${backstop.at}` : ', no backstop'}`, () => {
      const head = expectHiddenHeadAsWritten(candidate, { evasive: EVASIVE, averagedWith: AVERAGED, beside: CONFIGURED.head });
      // A narrowed backstop refuses by its CSAM probability alone (its harm threshold 1).
      expect(backstopsOf(head).map((b) => [b.from, b.sha256, b.threshold, b.csamThreshold])).to.deep.equal(
        backstop ? [[backstop.from, headSha256(backstop.from), 1, backstop.at]] : [],
      );
    });
  });
}
