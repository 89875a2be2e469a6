/**
 * Look-alike characters folded to the ASCII character a reader (or a model) takes them for. NFKC already
 * folds fullwidth forms, mathematical alphanumerics, ligatures and most compatibility spaces; it leaves
 * letters of other scripts alone, because to Unicode a Cyrillic `а` is a different letter. To a detector
 * looking for `sk-` or `AKIA` it is an evasion.
 *
 * The table is the Unicode consortium's confusables data (UTS #39 `confusables.txt`, the "skeleton"
 * mapping), as the `unhomoglyph` package ships it: every non-ASCII code point whose skeleton is one ASCII
 * character (Cyrillic, Greek, Armenian, Cherokee, Lisu, Latin small capitals, letter-like symbols ...). Two
 * adjustments, because a skeleton is a comparison key and not a spelling: the skeleton of `I` is `l`, so an
 * upper-case source that folds to `l` becomes `I` (a Cyrillic `І` in `AKІA` must read `AKIA`), and `rn` is
 * the skeleton of `m`. Sources that are ASCII themselves (`0`, `1`, `I`, `m`) are not folded: they are what
 * the text says.
 *
 * Beside it, two short lists. Letters whose skeleton in that data is not ASCII (`к` and `κ` have `ĸ`) or
 * that it leaves out, kept from the table this one replaced (they are used against our own evasion tests);
 * they only fill gaps. And what is not about letters: dash and slash look-alikes inside key shapes, and the
 * line and paragraph separators (PEM bodies are line-oriented).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const CONFUSABLES = require('unhomoglyph/data.json') as Record<string, string>;

const PRINTABLE_ASCII = /^[\x21-\x7e]$/;
const UPPER = /^\p{Lu}$/u;
const LATIN_LETTER = /^\p{Script=Latin}$/u;
const OVERLAYS = /\p{M}/gu;
const SYMBOL = /^[\p{P}\p{S}]$/u;

const GAPS: ReadonlyArray<readonly [string, string]> = [
  ['к', 'k'],
  ['κ', 'k'],
  ['χ', 'x'],
  ['Ԛ', 'Q'],
  ['Һ', 'H'],
  ['Ԁ', 'D'],
  ['ȷ', 'j'],
  ['ʀ', 'R'],
];

const EXTRA: ReadonlyArray<readonly [string, string]> = [
  // Dashes and minus signs: `sk‐proj` with U+2010 must still read as `sk-proj`.
  ['‐', '-'],
  ['‑', '-'],
  ['‒', '-'],
  ['–', '-'],
  ['—', '-'],
  ['―', '-'],
  ['−', '-'],
  ['⁃', '-'],
  ['˗', '-'],
  ['﹘', '-'],
  ['ー', '-'],
  // Slash look-alikes (base64 alphabet)
  ['∕', '/'],
  ['⁄', '/'],
  ['⧸', '/'],
  // The middle dot itself (the skeleton the dot look-alikes share).
  ['\u00b7', '.'],
  // The ideographic full stop (and its halfwidth form): a dot to a CJK reader, no confusable of one in
  // Unicode's data; `SG。…。…` is a SendGrid key.
  ['\u3002', '.'],
  ['\uff61', '.'],
  // Line and paragraph separators read as line breaks.
  ['\u2028', '\n'],
  ['\u2029', '\n'],
];

const DASH = /^[\p{Pd}\u2212\u2796\u02D7\u2043\u207B\u208B\uFE63\u23AF\u2500\u2501\u2574\u2576\u2578\u257A\u1173\u3161\u{10191}]$/u;

function build(): Map<number, string> {
  const table = new Map<number, string>();
  for (const [from, skeleton] of Object.entries(CONFUSABLES)) {
    const cp = from.codePointAt(0)!;
    if (cp < 0x80 || from.length !== (cp > 0xffff ? 2 : 1)) continue;
    // A compatibility form NFKC folds to ASCII (mathematical bold `𝟎`, fullwidth `０`) reads as what NFKC says:
    // its skeleton is a comparison key (`O` for a zero), and would turn the digits of a bold key into letters.
    if (PRINTABLE_ASCII.test(from.normalize('NFKC'))) continue;
    let to = skeleton === 'rn' ? 'm' : skeleton;
    // Latin letters with a stroke or bar (`ł`, `đ`, `ø`, `ħ`, `ŧ`, `ƶ`): their skeleton is the ASCII letter
    // with an overlay mark (`l̸`), which NFD does not give them; without the overlay they read as the letter.
    if (!PRINTABLE_ASCII.test(to) && LATIN_LETTER.test(from)) to = to.normalize('NFD').replace(OVERLAYS, '');
    // Dot look-alikes (`•`, `‧`, `∙`, `⋅`, whose skeleton is the middle dot) read as a dot; the space look-alikes
    // NFKC leaves alone (U+1680 OGHAM SPACE MARK) as a space.
    if (skeleton === '\u00b7' && SYMBOL.test(from)) to = '.';
    if (skeleton === ' ') {
      table.set(cp, ' ');
      continue;
    }
    if (!PRINTABLE_ASCII.test(to)) continue;
    if (to === 'l' && UPPER.test(from)) to = 'I';
    table.set(cp, to);
  }
  for (const [from, to] of GAPS) if (!table.has(from.codePointAt(0)!)) table.set(from.codePointAt(0)!, to);
  for (const [from, to] of EXTRA) table.set(from.codePointAt(0)!, to);
  // Every dash punctuation character (Unicode's Pd class: hyphens, dashes, the wave dash, the Hebrew maqaf,
  // the double hyphen ...) and the minus signs and bars that look like one read as `-`.
  for (let cp = 0x80; cp < 0x20000; cp++) if (DASH.test(String.fromCodePoint(cp))) table.set(cp, '-');
  return table;
}

export const HOMOGLYPHS: ReadonlyMap<number, string> = build();
