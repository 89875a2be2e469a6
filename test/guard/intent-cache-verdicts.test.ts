/**
 * The intent model's embedding cache changes no verdict: set A of the independent prompts (260 rows, most
 * read whole, some in windows and as conversations) read through the guardrail runtime with the real
 * encoder and head, by one model whose cache is on and one whose cache is off (`cacheEntries: 0`).
 *
 *  - red-team calls, then the same calls again: the first read embeds every reading (none was seen), the
 *    second takes every one from the cache, and the findings are the same, row by row;
 *  - blue-team calls (those the first pass marks or that are not in English): every reading from the cache
 *    of the first model, every one embedded by the second, and the findings are the same, row by row.
 *
 * With the evaluations (npm run test:evals): it reads a few hundred prompts with the model. The cache's
 * other behaviour (a conversation's new readings, the bound, failures, 0) is intent-cache.test.ts.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { compileGuardrails, loadGuardrailsDoc, type ChatLike, type ScanResult } from '../../src/guard/index.js';
import { IntentModel } from '../../src/guard/model/intent-model.js';
import { REPO } from '../helpers/gateway.js';
import { RULES_DIR } from './helpers/guardrails.js';
import { EVAL_CACHE_ENTRIES } from './helpers/intent-eval.js';

type Verdict = Pick<ScanResult, 'findings' | 'failures'>;

describe('guard: the same verdicts with the intent model’s embedding cache as without it', function () {
  this.timeout(900_000);
  const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
  const rows = readFileSync(`${REPO}/test/fixtures/guard/independent/set-a.jsonl`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { messages: ChatLike['messages'] }).messages);
  let on: IntentModel;
  let off: IntentModel;
  before(() => {
    on = new IntentModel({ ...doc.intentModel!, timeoutMs: 120_000, queue: 1_000, cacheEntries: EVAL_CACHE_ENTRIES });
    off = new IntentModel({ ...doc.intentModel!, timeoutMs: 120_000, queue: 1_000, cacheEntries: 0 });
  });
  after(() => Promise.all([on.close(), off.close()]));

  /** Every row's findings and failures as `team` calls, and what the model's stats gained meanwhile. */
  async function read(model: IntentModel, team: 'red' | 'blue') {
    const guard = compileGuardrails(doc, { intentModel: model });
    const [h, m, r] = [model.stats.hits, model.stats.misses, model.stats.readings];
    const verdicts: Verdict[] = [];
    for (const messages of rows) {
      const v = await guard.classify({ messages }, { team });
      verdicts.push({ findings: v.findings, failures: v.failures });
    }
    return { verdicts, hits: model.stats.hits - h, misses: model.stats.misses - m, readings: model.stats.readings - r };
  }
  const refused = (vs: Verdict[]) => vs.filter((v) => v.findings.some((f) => f.action === 'block')).length;

  it('holds a few hundred rows, refused and passed on both teams', () => {
    expect(rows.length).to.be.at.least(250);
  });

  it('red-team calls read again from the cache get the findings of their first read, which embedded every reading', async () => {
    const first = await read(on, 'red');
    const again = await read(on, 'red');
    console.log(`      set A red: ${first.readings} readings, ${first.misses} embedded; again: ${again.hits} from the cache, ${again.misses} embedded`);
    expect(first.misses).to.equal(first.readings);
    expect([again.hits, again.misses]).to.deep.equal([first.readings, 0]);
    expect(again.verdicts).to.deep.equal(first.verdicts);
    expect(refused(first.verdicts)).to.be.within(50, rows.length - 50);
  });

  it('blue-team calls read from the cache get the findings of a model without one', async () => {
    // The red-team reads of the same rows (here, or the test above) have filled the cache.
    await read(on, 'red');
    const cached = await read(on, 'blue');
    const plain = await read(off, 'blue');
    console.log(`      set A blue: ${cached.readings} readings, ${cached.hits} from the cache; without it ${plain.misses} embedded`);
    expect(cached.readings).to.be.above(100);
    expect([cached.hits, cached.misses]).to.deep.equal([cached.readings, 0]);
    expect([plain.hits, plain.misses]).to.deep.equal([0, cached.readings]);
    expect(cached.verdicts).to.deep.equal(plain.verdicts);
    expect(refused(cached.verdicts)).to.be.within(50, rows.length - 50);
  });
});
