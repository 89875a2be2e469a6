/**
 * The evasive training lines (test/fixtures/guard/intent/evasive/: romanised asks, a "for a classifier" pretext, asks
 * split over turns or buried in meeting notes, CSAM asks in lower-resource languages, plain fraud asks, and benign
 * lines), which scripts/train-guard-intent.ts reads when INTENT_EVASIVE / INTENT_EVASIVE_GATE name them. They were
 * written after reading which kinds of prompt the model gets wrong, never from the rows themselves: no line may be a
 * line of an evaluation set, or that set would measure the model on what it was trained on.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { evasiveLines, readTsv } from '../../scripts/train-guard-intent.js';
import { REPO } from '../helpers/gateway.js';

interface Row {
  messages: Array<{ role: string; content: string }>;
}

describe('guard: the evasive training lines', function () {
  it('shares no line with an evaluation set (the independent sets, the public data, the held-out file, the choice set)', () => {
    const norm = (t: string) => t.replace(/\s+/g, ' ').trim().toLowerCase();
    const fix = `${REPO}/test/fixtures/guard/`;
    const evaluated = new Set<string>();
    const jsonl = (p: string) =>
      readFileSync(p, 'utf8')
        .trim()
        .split('\n')
        .forEach((l) => {
          const r = JSON.parse(l) as Row;
          for (const m of r.messages) evaluated.add(norm(m.content));
          evaluated.add(norm(r.messages.map((m) => m.content).join('\n')));
        });
    for (const f of readdirSync(`${fix}independent/`).filter((f) => f.endsWith('.jsonl'))) jsonl(`${fix}independent/${f}`);
    jsonl(`${fix}public/public.jsonl`);
    for (const p of [
      'public/eval.tsv',
      'intent/heldout.tsv',
      'intent-choice/choice.tsv',
      ...readdirSync(`${fix}public-benign/`)
        .filter((f) => f.startsWith('eval-'))
        .map((f) => `public-benign/${f}`),
    ])
      for (const e of readTsv(`${fix}${p}`, p)) evaluated.add(norm(e.text));
    const all = evasiveLines('1').lines;
    expect(all.length).to.be.above(250);
    expect(all.filter((e) => evaluated.has(norm(e.text))).map((e) => e.text)).to.deep.equal([]);
  });
});
