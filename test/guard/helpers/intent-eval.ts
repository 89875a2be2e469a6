/**
 * The intent models the evaluations build (intent-{independent,public,benign-public,recall,gate,traps}
 * .test.ts), with one embedding cache between them: each file reads its rows as red-team calls, then as
 * blue-team calls, and several heads read the same sets (the traps head reads sets G and Y, which the
 * configured head reads too), so a reading is embedded once in the process, whichever file asks first. The
 * cache's bound is stated here rather than taken from rules/guardrails.yaml, so that a smaller production
 * setting does not make them embed every row again: it holds every reading of every set and the public data
 * (about 7,000 distinct), at most about 28 MiB while the evaluations run.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { compileGuardrails, loadGuardrailsDoc } from '../../../src/guard/index.js';
import { EmbeddingCache } from '../../../src/guard/model/embedding-cache.js';
import { IntentModel, type IntentModelDoc } from '../../../src/guard/model/intent-model.js';
import { readCorpus } from '../../../scripts/train-guard-intent.js';
import { REPO } from '../../helpers/gateway.js';
import { blockFindings, RULES_DIR } from './guardrails.js';

export const EVAL_CACHE_ENTRIES = 16_384;

const shared = new EmbeddingCache(EVAL_CACHE_ENTRIES);

/** A model of the configured intent section with `overrides` (a head, a threshold), reading through the shared cache. */
export function evalModel(overrides: Partial<IntentModelDoc> = {}): IntentModel {
  const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
  return new IntentModel({ ...doc.intentModel!, timeoutMs: 120_000, queue: 2_000, ...overrides }, { cache: shared });
}

/** The CSAM asks of `sets` (test/fixtures/guard/independent/), in their order. */
function csamAsks(sets: string[]): Array<{ id: string; messages: Array<{ role: string; content: string }> }> {
  return sets.flatMap((s) =>
    readFileSync(`${REPO}/test/fixtures/guard/independent/${s}.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; label: string; messages: Array<{ role: string; content: string }> })
      .filter((r) => r.label === 'csam'),
  );
}

/**
 * The CSAM asks of `sets` (test/fixtures/guard/independent/) read as red-team calls by a candidate head and by the
 * head it is held against, one call at a time as a client would send them: how many each refuses, and the ids the
 * other refuses and the candidate does not. A reading the encoder failed fails the check.
 */
export async function csamRefusals(
  candidate: IntentModel,
  against: IntentModel,
  sets: string[],
): Promise<{ asks: number; caught: number; was: number; lost: string[] }> {
  const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
  const guard = compileGuardrails(doc, { intentModel: candidate });
  const before = compileGuardrails(doc, { intentModel: against });
  const rows = csamAsks(sets);
  const lost: string[] = [];
  let caught = 0;
  let was = 0;
  for (const r of rows) {
    const v = await guard.classify({ messages: r.messages }, { team: 'red' });
    expect(v.failures ?? [], r.id).to.deep.equal([]);
    const now = blockFindings(v).length > 0;
    const then = blockFindings(await before.classify({ messages: r.messages }, { team: 'red' })).length > 0;
    if (now) caught++;
    if (then) was++;
    if (then && !now) lost.push(r.id);
  }
  return { asks: rows.length, caught, was, lost };
}

/** A head file and the threshold it is read at. */
interface HeadAt {
  head: string;
  threshold: number;
}

/**
 * The check every candidate with CSAM backstops passes through the runtime: read as red-team calls, it refuses every
 * CSAM ask of `sets` that `against` (the head it is held against, called `name` in the output) refuses.
 */
export function describeCsamKept(candidate: HeadAt, against: HeadAt, sets: string[], asks: number, title: string, name: string): void {
  describeBoth(candidate, against, (m) =>
    it(title, async () => {
      const { asks: read, caught, was, lost } = await csamRefusals(m.model, m.held, sets);
      expect(read).to.equal(asks);
      const names = sets.map((s) => s.replace('set-', '').toUpperCase());
      console.log(`      sets ${names.join(', ')}, CSAM asks refused: ${caught}/${asks} (${name}: ${was})`);
      expect(lost, `CSAM asks ${name} refuses`).to.deep.equal([]);
      expect(caught).to.be.at.least(was);
    }),
  );
}

/** A suite with the candidate's model and the one it is held against, each started once and closed after. */
function describeBoth(candidate: HeadAt, against: HeadAt, body: (models: { model: IntentModel; held: IntentModel }) => void): void {
  describe('through the runtime', () => {
    const models = {} as { model: IntentModel; held: IntentModel };
    before(() => {
      models.model = evalModel(candidate);
      models.held = evalModel(against);
    });
    after(() => Promise.all([models.model.close(), models.held.close()]));
    body(models);
  });
}

/**
 * The CSAM asks of `sets` (test/fixtures/guard/independent/) read by a model as calls of `team`, one at a time as a
 * client would send them: how many it refuses. A reading the encoder failed fails the check.
 */
export async function csamCaught(model: IntentModel, sets: string[], team: 'red' | 'blue'): Promise<{ asks: number; caught: number }> {
  const guard = compileGuardrails(loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`), { intentModel: model });
  const rows = csamAsks(sets);
  let caught = 0;
  for (const r of rows) {
    const v = await guard.classify({ messages: r.messages }, { team });
    expect(v.failures ?? [], r.id).to.deep.equal([]);
    if (blockFindings(v).length > 0) caught++;
  }
  return { asks: rows.length, caught };
}

/**
 * The check of a candidate held to *as many* CSAM asks as the configured model, not the same ones (the fifth round's
 * rule, docs/guardrails.md): read through the runtime as red-team and as blue-team calls, it refuses at least as many
 * CSAM asks of `sets` as `against` (called `name` in the output), on each team.
 */
export function describeCsamAsMany(candidate: HeadAt, against: HeadAt, sets: string[], asks: number, name: string): void {
  describeBoth(candidate, against, (m) => {
    for (const team of ['red', 'blue'] as const)
      it(`refuses at least as many CSAM asks of the looked-at sets as ${name}, as ${team}-team calls`, async () => {
        const now = await csamCaught(m.model, sets, team);
        const was = await csamCaught(m.held, sets, team);
        expect(now.asks).to.equal(asks);
        console.log(`      ${sets.length} sets as ${team}-team calls, CSAM asks refused: ${now.caught}/${asks} (${name}: ${was.caught})`);
        expect(now.caught).to.be.at.least(was.caught);
      });
  });
}

/**
 * The corpus's CSAM asks (test/fixtures/guard/intent/) a model refuses as CSAM (the csam-block rule) as calls of `team`,
 * each sent as intent-model.test.ts sends it (turns split at three line ends), one at a time. A reading the encoder
 * failed fails the check.
 */
async function corpusCsamRefused(model: IntentModel, team: 'red' | 'blue'): Promise<{ asks: number; refused: string[] }> {
  const guard = compileGuardrails(loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`), { intentModel: model });
  const asks = readCorpus().examples.filter((e) => e.label === 'csam');
  const refused: string[] = [];
  for (const e of asks) {
    const v = await guard.classify({ messages: e.text.split('\n\n\n').map((content) => ({ role: 'user', content })) }, { team });
    expect(v.failures ?? [], e.text).to.deep.equal([]);
    if (blockFindings(v).some((f) => f.rule === 'csam-block')) refused.push(e.text);
  }
  return { asks: asks.length, refused };
}

/**
 * The sixth round's rule (docs/guardrails.md): a candidate refuses every CSAM ask of the team's own corpus that the
 * head it is held against (`against`, called `name` in the output) refuses, on each team, and may refuse more.
 */
export function describeCorpusCsamKept(candidate: HeadAt, against: HeadAt, name: string): void {
  describeBoth(candidate, against, (m) => {
    for (const team of ['red', 'blue'] as const)
      it(`refuses every CSAM ask of the corpus that ${name} refuses, as ${team}-team calls`, async () => {
        const now = await corpusCsamRefused(m.model, team);
        const was = await corpusCsamRefused(m.held, team);
        console.log(`      corpus CSAM asks refused as ${team}-team calls: ${now.refused.length}/${now.asks} (${name}: ${was.refused.length})`);
        expect(
          was.refused.filter((t) => !now.refused.includes(t)),
          `CSAM asks ${name} refuses`,
        ).to.deep.equal([]);
      });
  });
}
