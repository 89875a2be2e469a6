/**
 * A cheap language check for routing, not identification: does a text look like something other than
 * English? Blue-team calls in another language go to the intent model even when the (English) topic terms
 * of the first pass do not occur, since those terms cannot see an ask written in Spanish or Japanese.
 *
 * Three signals, read over at most the first and last SAMPLE characters: the share of letters outside the
 * Latin script, the share of Latin letters with diacritics, and whether common function words of other
 * languages outnumber English ones. Linear in the sample, no allocation per word beyond the regex match.
 *
 * A word is a token of letters only: a token with a digit or an underscore in it (an identifier, a hash,
 * a line of random token pieces such as `4uyam + yq9lj + obbj7v37`) is no language's word, and the letter
 * runs between its digits are not words either. Counted as words, those runs (`yq`, `lj`, `ned`) met the
 * short function words of other languages (`de`, `il`, `je`, `ne`, `y`) often enough that a blue-team line
 * of such pieces read as "not English", was sent to the intent model, and was refused.
 */
import { codePointAt } from '../normalise.js';

const SAMPLE = 2000;

const ENGLISH = new Set(
  'the and to of a in is for that this with how what you it on be are do can my me please from or an as at by not we our your would should could if about into which there they them have has get where who why will i'.split(
    ' ',
  ),
);
// Function words of Spanish, French, German, Portuguese, Italian, Dutch, Turkish, Polish, Indonesian that
// are not English words.
const OTHER = new Set(
  (
    'de la el que y los las del por para con una uno es como pero más qué cómo dónde quiero necesito puedes ' +
    'le les des est pour avec une je vous nous mais dans sur pas comment où être faire ' +
    'der die das und ich ist nicht mit wie um ein eine zu den dem auf für sich auch wo kann bitte ' +
    'não você uma com os em se mais quero preciso fazer como ' +
    'il di che per non sono della nel gli mi come dove voglio ' +
    'het een van niet ik je hoe waar wil ' +
    'bir ve bu nasıl için ne ile da mı mi nerede istiyorum ' +
    'jak nie się jest czy gdzie chcę ' +
    'yang dan dengan untuk tidak bagaimana saya ini itu'
  ).split(' '),
);

const LATIN = /\p{Script=Latin}/u;
/** A token: a run of letters, digits and underscores; a word when it holds neither digit nor underscore. */
const TOKEN = /[\p{L}\p{N}_]+/gu;
const NOT_A_WORD = /[\p{N}_]/u;
const LETTER = /\p{L}/u;

/** The longest all-ASCII word of either list: a longer run of letters is neither, and is not sliced out. */
const LONGEST = Math.max(...[...ENGLISH, ...OTHER].filter((w) => /^[a-z]+$/.test(w)).map((w) => w.length));
/**
 * Whether some all-ASCII listed word has this length, first and last letter: most words of a call have
 * none, and are neither copied out nor hashed for a lookup (a slice and a set lookup a word were most of the
 * check's time).
 */
const SHAPES = new Uint8Array((LONGEST + 1) * 26 * 26);
const shapeOf = (length: number, first: number, last: number) => (length * 26 + (first - 0x61)) * 26 + (last - 0x61);
for (const w of [...ENGLISH, ...OTHER]) {
  if (/^[a-z]+$/.test(w)) SHAPES[shapeOf(w.length, w.charCodeAt(0), w.charCodeAt(w.length - 1))] = 1;
}

/** True when the text reads as something other than English. */
export function looksNonEnglish(text: string): boolean {
  const ascii = asciiVerdict(text);
  return ascii === undefined ? mixedVerdict(text) : ascii;
}

/**
 * The verdict on an all-ASCII sample in one pass over the text, with no copy of it: undefined at its first
 * character above ASCII, which the full reading below takes. On ASCII the letter shares decide nothing (no
 * letter of another script, none with a diacritic), so the answer is the word count alone: the runs of a-z,
 * A-Z, 0-9 and _ (a token; the sample's two ends cut by a space, as the full reading joins them), a word when
 * it holds letters only, looked up in lower case. This was a count of letters, a lower-case copy of the
 * sample and then the word pass: the language check was about 2 % of a small call.
 */
function asciiVerdict(text: string): boolean | undefined {
  const n = text.length;
  words.en = 0;
  words.foreign = 0;
  if (n <= 2 * SAMPLE) {
    if (!countWords(text, 0, n)) return undefined;
  } else if (!countWords(text, 0, SAMPLE) || !countWords(text, n - SAMPLE, n)) return undefined;
  return words.foreign > words.en;
}

/** English and other words counted by countWords (one call at a time: no object per call). */
const words = { en: 0, foreign: 0 };

/** Counts the words of text[from, to) into `words`; false at a character above ASCII. */
function countWords(text: string, from: number, to: number): boolean {
  let start = -1;
  let letters = true;
  let upper = false;
  for (let i = from; i <= to; i++) {
    const c = i < to ? text.charCodeAt(i) : 0;
    if (c >= 0x80) return false;
    const lower = c | 0x20;
    const letter = lower >= 0x61 && lower <= 0x7a;
    if (letter || (c >= 0x30 && c <= 0x39) || c === 0x5f) {
      if (start < 0) {
        start = i;
        letters = true;
        upper = false;
      }
      if (!letter) letters = false;
      else if (c < 0x61) upper = true;
    } else if (start >= 0) {
      if (letters && i - start <= LONGEST && SHAPES[shapeOf(i - start, text.charCodeAt(start) | 0x20, text.charCodeAt(i - 1) | 0x20)] === 1) {
        const w = upper ? text.slice(start, i).toLowerCase() : text.slice(start, i);
        if (ENGLISH.has(w)) words.en++;
        else if (OTHER.has(w)) words.foreign++;
      }
      start = -1;
    }
  }
  return true;
}

/** The full reading, for a sample with characters above ASCII. */
function mixedVerdict(text: string): boolean {
  const sample = text.length <= 2 * SAMPLE ? text : text.slice(0, SAMPLE) + ' ' + text.slice(-SAMPLE);
  let latin = 0;
  let accented = 0;
  let other = 0;
  // ASCII, almost every character of most calls, is classified by its code: its only Latin-script characters
  // and its only letters are A-Z and a-z. A regex test per character was a few per cent of a small call.
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if (c < 0x80) {
      if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) latin++;
      continue;
    }
    const cp = codePointAt(sample, i);
    if (cp > 0xffff) i++;
    const ch = String.fromCodePoint(cp);
    if (LATIN.test(ch)) {
      latin++;
      accented++;
    } else if (LETTER.test(ch)) other++;
  }
  if (latin + other === 0) return false;
  if (other / (latin + other) > 0.15) return true;
  // Letters with diacritics (ç, ğ, ñ, ã, ü, ł...) are rare in English and common in most Latin-script
  // languages.
  if (accented >= 2 && accented / latin > 0.015) return true;
  let en = 0;
  let foreign = 0;
  const lower = sample.toLowerCase();
  for (const m of lower.matchAll(TOKEN)) {
    const w = m[0];
    if (NOT_A_WORD.test(w)) continue;
    if (ENGLISH.has(w)) en++;
    else if (OTHER.has(w)) foreign++;
  }
  return foreign > en;
}
