/**
 * What the intent model reads of a text (src/guard/model/readings.ts modelText): compatibility forms folded
 * (NFKC) and invisible format characters dropped. ASCII text is returned as it is, without either pass; this
 * holds that shortcut to the full reading on every file and line of the guard corpus, on every ASCII code
 * unit, and on texts just past ASCII (which take the full reading).
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { modelText } from '../../src/guard/model/readings.js';
import { FIXTURES_DIR } from './helpers/guardrails.js';

/** The full reading, as modelText reads a text that is not ASCII. */
const fullReading = (text: string) => text.normalize('NFKC').replace(/[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu, '');

function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
}

describe('guard: the text the intent model reads', () => {
  const wholes = files(FIXTURES_DIR).map((f) => readFileSync(f, 'utf8'));
  const lines = wholes.flatMap((w) => w.split('\n'));

  it('is the full reading for every file and line of the guard corpus, ASCII or not', () => {
    let ascii = 0;
    for (const t of [...wholes, ...lines]) {
      if (/^\p{ASCII}*$/u.test(t)) ascii++;
      expect(modelText(t), JSON.stringify(t.slice(0, 60))).to.equal(fullReading(t));
    }
    // Both paths are taken.
    expect(ascii).to.be.greaterThan(100);
    expect(wholes.length + lines.length - ascii).to.be.greaterThan(10);
  });

  it('leaves every ASCII code unit as it is, and still folds and drops just past ASCII', () => {
    const all = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).join('');
    expect(modelText(all)).to.equal(all);
    expect(fullReading(all)).to.equal(all);
    expect(modelText(`${all}\u00a0\u00ad\u200b\uff53\uff4b`)).to.equal(`${all} sk`);
  });
});
