/**
 * A cheap language check for routing, not identification: does a text look like something other than
 * English? Blue-team calls in another language go to the intent model even when the (English) topic terms
 * of the first pass do not occur, since those terms cannot see an ask written in Spanish or Japanese.
 *
 * Three signals, read over at most the first and last SAMPLE characters: the share of letters outside the
 * Latin script, the share of Latin letters with diacritics, and whether common function words of other
 * languages outnumber English ones. Linear in the sample; an all-ASCII sample (most calls) allocates nothing
 * per word, a text with other characters a regex match per word.
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

/**
 * The ASCII words of both lists by the hash the ASCII path computes as it reads a word (h = h * 31 + code,
 * lower-cased), English first: a word in both lists counts as English, as the lists' lookups order it.
 */
const BY_HASH = new Map<number, Array<{ word: string; kind: 'en' | 'other' }>>();
for (const [words, kind] of [
  [ENGLISH, 'en'],
  [OTHER, 'other'],
] as const) {
  for (const word of words) {
    if (!/^[a-z]+$/.test(word)) continue; // never an ASCII token
    let h = 0;
    for (let i = 0; i < word.length; i++) h = (Math.imul(h, 31) + word.charCodeAt(i)) | 0;
    const list = BY_HASH.get(h) ?? [];
    if (!list.some((e) => e.word === word)) list.push({ word, kind });
    BY_HASH.set(h, list);
  }
}

/** Which list holds the word `text[from, to)` of ASCII letters (any case) whose hash is `h`, if either. */
function wordKind(text: string, from: number, to: number, h: number): 'en' | 'other' | null {
  const list = BY_HASH.get(h);
  if (list === undefined) return null;
  for (const { word, kind } of list) {
    if (word.length !== to - from) continue;
    let same = true;
    for (let k = 0; k < word.length && same; k++) same = (text.charCodeAt(from + k) | 0x20) === word.charCodeAt(k);
    if (same) return kind;
  }
  return null;
}

const LATIN = /\p{Script=Latin}/u;
/** A token: a run of letters, digits and underscores; a word when it holds neither digit nor underscore. */
const TOKEN = /[\p{L}\p{N}_]+/gu;
const NOT_A_WORD = /[\p{N}_]/u;
const LETTER = /\p{L}/u;

/** True when the text reads as something other than English. */
export function looksNonEnglish(text: string): boolean {
  const sample = text.length <= 2 * SAMPLE ? text : text.slice(0, SAMPLE) + ' ' + text.slice(-SAMPLE);
  let latin = 0;
  let accented = 0;
  let other = 0;
  let ascii = true;
  // ASCII, almost every character of most calls, is classified by its code: its only Latin-script characters
  // and its only letters are A-Z and a-z. A regex test per character was a few per cent of a small call.
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if (c < 0x80) {
      if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) latin++;
      continue;
    }
    ascii = false;
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
  if (ascii) {
    // All ASCII: the tokens are the runs of letters, digits and _, cut by code, no regex match per word; a
    // token is a word when it holds letters only. A word is looked up by a hash of its lower-cased letters,
    // compared letter by letter: neither the lower-cased text nor each word is copied out.
    let start = -1;
    let letters = true;
    let h = 0;
    for (let i = 0; i <= sample.length; i++) {
      let c = i < sample.length ? sample.charCodeAt(i) : 0;
      if (c >= 0x41 && c <= 0x5a) c |= 0x20;
      const letter = c >= 0x61 && c <= 0x7a;
      if (letter || (c >= 0x30 && c <= 0x39) || c === 0x5f) {
        if (start < 0) {
          start = i;
          letters = true;
          h = 0;
        }
        if (!letter) letters = false;
        h = (Math.imul(h, 31) + c) | 0;
      } else if (start >= 0) {
        if (letters) {
          const kind = wordKind(sample, start, i, h);
          if (kind === 'en') en++;
          else if (kind === 'other') foreign++;
        }
        start = -1;
      }
    }
    return foreign > en;
  }
  const lower = sample.toLowerCase();
  for (const m of lower.matchAll(TOKEN)) {
    const w = m[0];
    if (NOT_A_WORD.test(w)) continue;
    if (ENGLISH.has(w)) en++;
    else if (OTHER.has(w)) foreign++;
  }
  return foreign > en;
}
