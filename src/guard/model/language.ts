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
  const lower = sample.toLowerCase();
  if (ascii) {
    // All ASCII: the tokens are the runs of a-z, 0-9 and _, cut by code, no regex match per word; a token
    // is a word when it holds letters only.
    let start = -1;
    let letters = true;
    for (let i = 0; i <= lower.length; i++) {
      const c = i < lower.length ? lower.charCodeAt(i) : 0;
      const letter = c >= 0x61 && c <= 0x7a;
      if (letter || (c >= 0x30 && c <= 0x39) || c === 0x5f) {
        if (start < 0) {
          start = i;
          letters = true;
        }
        if (!letter) letters = false;
      } else if (start >= 0) {
        if (letters) {
          const w = lower.slice(start, i);
          if (ENGLISH.has(w)) en++;
          else if (OTHER.has(w)) foreign++;
        }
        start = -1;
      }
    }
    return foreign > en;
  }
  for (const m of lower.matchAll(TOKEN)) {
    const w = m[0];
    if (NOT_A_WORD.test(w)) continue;
    if (ENGLISH.has(w)) en++;
    else if (OTHER.has(w)) foreign++;
  }
  return foreign > en;
}
