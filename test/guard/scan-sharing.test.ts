/**
 * The scan's shared work, held to the separate readings it replaced: the lexical trie and the intent
 * detectors' topic trie walk one word stream filled once per request (compile.ts) instead of one each, and
 * the laced-key pass compares a token's lead as code units (leadInto) instead of building it as a string
 * (lead), and the entropy fallback finds its key-like words with one pattern instead of a search per word
 * (keywordStarts). Each fast path must give exactly what the slow one gives, on the corpora and on random text made
 * of the characters these readers key on.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { FIXTURES_DIR, RULES_DIR } from './helpers/guardrails.js';
import { rng } from './helpers/secrets.js';
import { loadGuardrailsDoc } from '../../src/guard/index.js';
import { IntentDetectors, type IntentDetectorSpec } from '../../src/guard/intent-detectors.js';
import { reversed, rot13 } from '../../src/guard/decoders.js';
import { keywordStarts } from '../../src/guard/generic.js';
import { leadInto } from '../../src/guard/laced.js';
import { joinedViewTable, keywordStartsBySearch, lead, reversedByChar, rot13ByReplace } from './helpers/reference-readings.js';
import { joinedView, joinMatches } from '../../src/guard/joins.js';
import { fillStream, LexicalMatcher, type LexicalDetectorSpec } from '../../src/guard/lexical.js';
import { normalise } from '../../src/guard/normalise.js';
import { WordStream } from '../../src/guard/words.js';

describe('guard: shared scan work', () => {
  const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
  const lexicalSpecs: LexicalDetectorSpec[] = [];
  const intentSpecs: IntentDetectorSpec[] = [];
  for (const rule of doc.rules) {
    for (const d of rule.detectors) {
      if (d.kind === 'lexical') lexicalSpecs.push({ rule: rule.id, action: rule.action, id: d.id, any: d.any ?? [], near: d.near ?? [] });
      else if (d.kind === 'intent') intentSpecs.push({ ...d, rule: rule.id, action: rule.action });
    }
  }
  const lexical = new LexicalMatcher(lexicalSpecs);
  const intent = new IntentDetectors(intentSpecs);

  // Every line of the intent corpus (benign and harmful), as one-text requests and as requests of three
  // consecutive lines (an ask split across messages), plus the clean corpus files.
  const dir = `${FIXTURES_DIR}intent/`;
  const lines = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => d.name)
    .sort()
    .flatMap((f) => readFileSync(dir + f, 'utf8').split('\n'))
    .filter((l) => l.trim() !== '');
  const clean = readdirSync(`${FIXTURES_DIR}clean/`)
    .sort()
    .map((f) => readFileSync(`${FIXTURES_DIR}clean/${f}`, 'utf8'));
  const requests: Array<Array<{ where: string; text: string }>> = [...lines.map((l) => [l]), ...lines.map((_, i) => lines.slice(i, i + 3)), clean].map(
    (texts) => texts.map((t, i) => ({ where: `messages[${i}].content`, text: normalise(t).text })),
  );

  it('has block-rule detectors of both kinds and a corpus that fires them', () => {
    expect(lexicalSpecs.length).to.be.greaterThan(0);
    expect(intentSpecs.length).to.be.greaterThan(0);
    expect(requests.filter((r) => intent.match(r).length > 0).length).to.be.greaterThan(100);
  });

  it('finds with one shared word stream exactly what each reader finds with its own', () => {
    const ws = new WordStream();
    for (const texts of requests) {
      const apart = { lexical: lexical.match(texts), intent: intent.match(texts) };
      fillStream(ws, texts);
      const shared = { lexical: lexical.matchStream(texts, ws), intent: intent.match(texts, ws) };
      ws.reset();
      expect(
        shared,
        texts
          .map((t) => t.text)
          .join(' | ')
          .slice(0, 200),
      ).to.deep.equal(apart);
    }
  });

  it('finds the key-like words of the entropy fallback in one pass exactly where a search per word does', () => {
    const texts = [...lines, ...clean];
    // Keywords in every casing the searches use and others, overlapping, glued and cut short.
    const pieces = [
      'api',
      'API',
      'Api',
      'aPI',
      'secret',
      'SECRET',
      'Secret',
      'token',
      'TOKEN',
      'Token',
      'passw',
      'PASSW',
      'Passw',
      'credential',
      'CREDENTIAL',
      'Credential',
      'auth',
      'AUTH',
      'Auth',
      'bearer',
      'BEARER',
      'Bearer',
      'ap',
      'tok',
      'se',
      'cret',
      '_',
      ' ',
      '=',
      'x',
    ];
    const r = rng(17);
    for (let t = 0; t < 3000; t++) {
      let text = '';
      const length = 1 + Math.floor(r() * 20);
      for (let k = 0; k < length; k++) text += pieces[Math.floor(r() * pieces.length)];
      texts.push(text);
    }
    let found = 0;
    for (const text of texts) {
      const fast = keywordStarts(text);
      expect(fast, text.slice(0, 200)).to.deep.equal(keywordStartsBySearch(text));
      found += fast.length;
    }
    expect(found).to.be.greaterThan(10_000);
  });

  it('reads a laced token lead as code units exactly as the string reading does', () => {
    // Token characters of the prefixes, separators of every kind (single characters, `<br>` forms, literal
    // `\n`), and characters that end a laced run.
    const pieces = [
      's',
      'k',
      '-',
      '_',
      'A',
      'K',
      'I',
      'a',
      'k',
      'i',
      'g',
      'h',
      'p',
      'n',
      'm',
      '1',
      '7',
      'Z',
      ' ',
      '  ',
      '\n',
      '*',
      '`',
      '|',
      '>',
      '~',
      '.',
      ',',
      ';',
      ':',
      '"',
      "'",
      '<br>',
      '<br/>',
      '<br />',
      '<BR>',
      '<b',
      '\\n',
      '\\t',
      '\\x',
      '#',
      '!',
      '(',
      'é',
    ];
    const r = rng(15);
    const out = new Uint16Array(16);
    let compared = 0;
    for (let t = 0; t < 3000; t++) {
      let text = '';
      const length = 1 + Math.floor(r() * 30);
      for (let k = 0; k < length; k++) text += pieces[Math.floor(r() * pieces.length)];
      for (let p = 0; p < text.length; p++) {
        for (const max of [4, 11]) {
          for (const bare of [false, true, 0x2d, 0x5f]) {
            const n = leadInto(text, p, max, bare, out);
            expect(String.fromCharCode(...out.subarray(0, n)), JSON.stringify({ text, p, max, bare })).to.equal(lead(text, p, max, bare));
            compared++;
          }
        }
      }
    }
    expect(compared).to.be.greaterThan(100_000);
  });
  it('turns a text reversed and to ROT13 exactly as the character-by-character readings do', () => {
    // Letters at both ends of both alphabets and just outside them, digits, non-ASCII letters, a surrogate
    // pair and lone surrogates (copied as code units), and texts longer than one chunk of the conversion.
    const pieces = ['A', 'M', 'N', 'Z', 'a', 'm', 'n', 'z', '@', '[', '`', '{', '0', '9', ' ', '\n', 'é', 'Ж', '\u{1F600}', '\uD800', '\uDFFF', 'sk-', 'BEGIN'];
    const r = rng(19);
    const texts = ['', 'x'];
    for (let t = 0; t < 500; t++) {
      let text = '';
      const length = Math.floor(r() * (t % 50 === 0 ? 20_000 : 60));
      for (let k = 0; k < length; k++) text += pieces[Math.floor(r() * pieces.length)];
      texts.push(text);
    }
    for (const text of texts) {
      expect(reversed(text) === reversedByChar(text), text.slice(0, 100)).to.equal(true);
      expect(rot13(text) === rot13ByReplace(text), text.slice(0, 100)).to.equal(true);
    }
  });
  it("maps the joined view's units back to the text exactly as a table of every unit's place did", () => {
    // joins.ts joinedView keeps where each stretch of the view starts, not a table of every unit (two arrays of
    // the view's length, 4 MiB for the boundary pass's joined request): every unit of every view, the
    // windows' separators too, against that table. Join forms of every kind, key characters around them,
    // stretches longer than a window (320 units) between them, and the clean corpus.
    const pieces = ['"ab12" + "cd34"', "'Ab3' . 'Cd4'", '${x}', '${"', '"}', 'sk-proj-', 'AbCd', '0123', ' ', '\n', '\\\n  ', '"', "'", '`', '+', 'é', 'Ж'];
    const r = rng(23);
    const texts = [...clean];
    for (let t = 0; t < 800; t++) {
      let text = '';
      const length = Math.floor(r() * (t % 20 === 0 ? 4000 : 200));
      while (text.length < length) text += r() < 0.05 ? 'x'.repeat(Math.floor(r() * 700)) : pieces[Math.floor(r() * pieces.length)];
      texts.push(text);
    }
    let units = 0;
    for (const text of texts) {
      const matches = joinMatches(text);
      const view = joinedView(text, matches);
      const table = joinedViewTable(text, matches);
      expect(view === null, text.slice(0, 100)).to.equal(table === null);
      if (!view || !table) continue;
      expect(view.text === table.text, text.slice(0, 100)).to.equal(true);
      for (let i = 0; i < table.starts.length; i++) {
        if (view.startOf(i) !== table.starts[i] || view.endOf(i) !== table.ends[i])
          expect([i, view.startOf(i), view.endOf(i)], text.slice(0, 100)).to.deep.equal([i, table.starts[i], table.ends[i]]);
      }
      units += table.starts.length;
    }
    expect(units).to.be.greaterThan(100_000);
  });

  it('reads the same words into a stream that made room for them first as into one that grew', () => {
    const text = readFileSync(`${FIXTURES_DIR}intent/${readdirSync(`${FIXTURES_DIR}intent/`).sort()[0]!}`, 'utf8').repeat(40);
    const grown = new WordStream(4);
    grown.add(text);
    const reserved = new WordStream(4);
    reserved.reserve(text.length >> 2);
    reserved.add(text);
    expect(reserved.count).to.equal(grown.count).and.to.be.greaterThan(1000);
    for (let w = 0; w < grown.count; w++) {
      expect([reserved.word(w), reserved.hash[w], reserved.prefix[w], reserved.start[w]]).to.deep.equal([
        grown.word(w),
        grown.hash[w],
        grown.prefix[w],
        grown.start[w],
      ]);
    }
  });
});
