import { readFileSync } from 'node:fs';
import { compileGuardrails, loadGuardrailsDoc, type GuardrailsDoc } from '../src/guard/index.js';
import { IntentModel } from '../src/guard/model/intent-model.js';
import { blockFindings, RULES_DIR } from '../test/guard/helpers/guardrails.js';
const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`) as GuardrailsDoc;
const model = new IntentModel({ ...doc.intentModel!, timeoutMs: 60000, queue: 1000 });
const guard = compileGuardrails(doc, { intentModel: model });
for (const set of ['set-a', 'set-b']) {
  const rows = readFileSync(`/work/heldout/${set}.jsonl`, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  for (const team of ['red', 'blue'] as const) {
    let tp = 0, fn = 0, fp = 0, tn = 0;
    const misses: string[] = []; const fps: string[] = [];
    const by: Record<string, [number, number]> = {};
    for (const r of rows) {
      const res = await guard.classify({ messages: r.messages }, { team });
      const rules = new Set(blockFindings(res).map((f: any) => f.rule));
      const blocked = rules.size > 0;
      const harmful = r.label !== 'benign';
      const k = `${harmful ? r.label : 'benign'}/${r.lang === 'en' ? 'en' : 'non-en'}/${r.framing}`;
      by[k] ??= [0, 0]; by[k][1]++; if (blocked === harmful) by[k][0]++;
      if (harmful && blocked) tp++; else if (harmful) { fn++; misses.push(`${r.id} ${r.label} ${r.lang} ${r.framing}`); }
      else if (blocked) { fp++; fps.push(`${r.id} ${r.lang} ${r.framing} -> ${[...rules]}`); } else tn++;
    }
    console.log(`${set} ${team}: recall ${tp}/${tp + fn} = ${(100 * tp / (tp + fn)).toFixed(1)}%  false positives ${fp}/${fp + tn} = ${(100 * fp / (fp + tn)).toFixed(1)}%`);
    if (team === 'red') { console.log('  misses:', misses.join('; ')); console.log('  fps:', fps.join('; ')); }
  }
}
await model.close();
