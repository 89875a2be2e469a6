/**
 * The language check that sends non-English blue-team calls to the intent model (src/guard/model/language.ts).
 * Its letter count classifies ASCII by character code and only the rest by Unicode property; this holds it to
 * the per-character regex reading it replaced, on texts as callers write them and on a fuzzed corpus mixing
 * ASCII, Latin letters with diacritics, other scripts, astral characters and lone surrogates.
 */
import { expect } from 'chai';
import { looksNonEnglish } from '../../src/guard/model/language.js';
import { rng } from '../../scripts/rng.js';

const SAMPLE = 2000;
const ENGLISH_WORDS =
  'the and to of a in is for that this with how what you it on be are do can my me please from or an as at by not we our your would should could if about into which there they them have has get where who why will i';
const OTHER_WORDS =
  'de la el que y los las del por para con una uno es como pero más qué cómo dónde quiero necesito puedes le les des est pour avec une je vous nous mais dans sur pas comment où être faire der die das und ich ist nicht mit wie um ein eine zu den dem auf für sich auch wo kann bitte não você uma com os em se mais quero preciso fazer como il di che per non sono della nel gli mi come dove voglio het een van niet ik je hoe waar wil bir ve bu nasıl için ne ile da mı mi nerede istiyorum jak nie się jest czy gdzie chcę yang dan dengan untuk tidak bagaimana saya ini itu';

/** The reading before the ASCII fast path: one regex test per character, one regex match per token. */
function reference(text: string): boolean {
  const english = new Set(ENGLISH_WORDS.split(' '));
  const other_ = new Set(OTHER_WORDS.split(' '));
  const sample = text.length <= 2 * SAMPLE ? text : text.slice(0, SAMPLE) + ' ' + text.slice(-SAMPLE);
  let latin = 0;
  let accented = 0;
  let other = 0;
  for (const ch of sample) {
    if (/\p{Script=Latin}/u.test(ch)) {
      latin++;
      if (ch > '\u007f') accented++;
    } else if (/\p{L}/u.test(ch)) other++;
  }
  if (latin + other === 0) return false;
  if (other / (latin + other) > 0.15) return true;
  if (accented >= 2 && accented / latin > 0.015) return true;
  let en = 0;
  let foreign = 0;
  // Words: tokens (runs of letters, digits and underscores) of letters only.
  for (const m of sample.toLowerCase().matchAll(/[\p{L}\p{N}_]+/gu)) {
    if (/[\p{N}_]/u.test(m[0])) continue;
    if (english.has(m[0])) en++;
    else if (other_.has(m[0])) foreign++;
  }
  return foreign > en;
}

describe('looksNonEnglish (the intent model routing language check)', () => {
  it('reads English as English and other languages and scripts as not', () => {
    expect(looksNonEnglish('Please review this function for SQL injection and tell me how to fix it.')).to.equal(false);
    expect(looksNonEnglish('¿Cómo puedo escribir un exploit para esta vulnerabilidad? Necesito ayuda con el código.')).to.equal(true);
    expect(looksNonEnglish('このコードの脆弱性を説明してください。')).to.equal(true);
    expect(looksNonEnglish('Wie kann ich diese Lücke ausnutzen, bitte?')).to.equal(true);
    expect(looksNonEnglish('12345 !!! ---')).to.equal(false);
    // Spanish without a diacritic, all ASCII: its function words outnumber English ones.
    expect(looksNonEnglish('Quiero saber como hacer esto con una herramienta para la red de la empresa')).to.equal(true);
  });

  it('does not read the letters between the digits of token-like pieces as words of another language', () => {
    // Lines of random token pieces (keys, ids, hashes) joined with + or spaces: the runs between their digits
    // (yq, lj, ned, y) were counted as words and met other languages' function words (y, ne, de, il).
    for (const text of [
      '4uyam + yq9lj + qleldwjm + obbj7v37 + y4fe2b4z',
      'fo5001 + h048ksozk + kxbjpag62 + y4k2dhsjr + h7dd3fg0 + ned3 + 154gp81m + mayfsn8 + 7za71p + 5vmeezwl7 + zfdz0',
      'dem6qxm58 o0m9271 cq2khbpq',
      'zpc95y6, 032qpitf, gqjuqft6l',
      'build_de_la_2 + node_il_je + x9de + 7la',
      'ключ: 4uyam + yq9lj + obbj7v37',
    ])
      expect(looksNonEnglish(text), text).to.equal(text.startsWith('ключ'));
    // Digits beside the words of another language do not hide them.
    expect(looksNonEnglish('Wie kann ich 2 Server mit 16 GB in 3 Schritten aufsetzen?')).to.equal(true);
    expect(looksNonEnglish('Quiero saber como hacer 3 copias de la base 2024 para la red')).to.equal(true);
  });

  it('answers as the per-character regex reading did, on a fuzzed corpus', () => {
    const ascii = ['the ', 'and ', 'Zz', 'aA', '@[`{', '0123 ', '\n\t', 'ABC ', 'x', 'review ', 'function ', 'please ', 'de ', 'que ', 'la ', 'und ', 'IST '];
    // A digit or an underscore makes the letters around it part of a token, not a word.
    ascii.push('7', '_');
    const pieces = [
      'café ',
      'ñ',
      'Ł',
      'ß',
      'ﬁ',
      'ª',
      'º',
      'Ⅻ',
      'кто ',
      'что ',
      'مرحبا ',
      '你好',
      'カタカナ',
      '😀',
      '𝐀𝐁',
      '٣',
      '\ud800',
      '\udc00',
      'de ',
      'que ',
      'für ',
      'não ',
      'się ',
      'için ',
      'ABC ',
      'x',
    ];
    const next = rng(0x2545f491);
    const rand = (n: number): number => Math.floor(next() * n);
    let yes = 0;
    for (let i = 0; i < 3000; i++) {
      const parts: string[] = [];
      const len = 1 + rand(i % 10 === 0 ? 1500 : 60);
      // Mostly ASCII, as most calls are, with a varying share of the rest.
      const mixed = 1 + rand(40);
      for (let j = 0; j < len; j++) parts.push(rand(100) < mixed ? pieces[rand(pieces.length)]! : ascii[rand(ascii.length)]!);
      const text = parts.join('');
      const want = reference(text);
      if (want) yes++;
      expect(looksNonEnglish(text), JSON.stringify(text.slice(0, 200))).to.equal(want);
    }
    // The corpus exercises both answers.
    expect(yes).to.be.within(300, 2700);
  });

  it('answers as the reference on all-ASCII texts, long ones cut around the sample included', () => {
    // The ASCII reading counts words in one pass over the text's two ends, without a copy: words in capitals,
    // runs longer than any listed word, and tokens that straddle either end of the sample are held to it.
    const ascii = [
      'the ',
      'The ',
      'THE ',
      'and ',
      'De ',
      'dE ',
      'que ',
      'QUE ',
      'la ',
      'und ',
      'istiyorum ',
      'Istiyorumx ',
      'bagaimana ',
      'x',
      'y ',
      'Y ',
      '7',
      '_',
      ' ',
      '.',
      'review ',
      'function ',
      'Zz',
      '@[`{',
    ];
    const next = rng(0x1f123bb5);
    const rand = (n: number): number => Math.floor(next() * n);
    let yes = 0;
    for (let i = 0; i < 1500; i++) {
      // A third past the sample's two ends (2 × 2000 characters), the rest short.
      const len = 1 + rand(i % 3 === 0 ? 2500 : 80);
      const parts: string[] = [];
      // English words weighted up in some texts so that both answers occur.
      const englishBias = rand(4);
      for (let j = 0; j < len; j++) parts.push(rand(10) < englishBias ? ['the ', 'How ', 'you '][rand(3)]! : ascii[rand(ascii.length)]!);
      const text = parts.join('');
      const want = reference(text);
      if (want) yes++;
      expect(looksNonEnglish(text), JSON.stringify(text.slice(0, 200))).to.equal(want);
    }
    expect(yes).to.be.within(150, 1350);
    // A token across the cut between the sample's two ends, and across each end's far side.
    for (const cut of [SAMPLE - 1, SAMPLE, SAMPLE + 1]) {
      const text = 'x'.repeat(cut - 2) + 'de la que ' + ' the'.repeat(400) + ' de'.repeat(1500);
      expect(looksNonEnglish(text)).to.equal(reference(text));
    }
    // A word cut out of a longer run by the sample's end is read as that word.
    expect(looksNonEnglish('.'.repeat(SAMPLE - 2) + 'de' + 'z'.repeat(3000))).to.equal(true);
    expect(looksNonEnglish('z'.repeat(3000) + 'de' + '.'.repeat(SAMPLE - 2))).to.equal(true);
    expect(looksNonEnglish('z'.repeat(3000) + 'de' + '.'.repeat(SAMPLE - 1))).to.equal(false);
  });
});
