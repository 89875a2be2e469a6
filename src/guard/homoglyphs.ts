/**
 * Look-alike characters folded to the ASCII character a reader (or a model) takes them for. NFKC already
 * folds fullwidth forms, mathematical alphanumerics, ligatures and most compatibility spaces; it leaves
 * letters of other scripts alone, because to Unicode a Cyrillic `а` is a different letter. To a detector
 * looking for `sk-` or `AKIA` it is an evasion, so Cyrillic, Greek and a few Latin/Armenian confusables are
 * mapped here, together with the dash and slash look-alikes that matter inside key shapes.
 *
 * The table is deliberately limited to characters that are near-indistinguishable from the ASCII letter in
 * common fonts (after Unicode's confusables.txt); folding more would only make lexical matching noisier.
 */

const PAIRS: ReadonlyArray<readonly [string, string]> = [
  // Cyrillic capitals
  ['А', 'A'], ['В', 'B'], ['Е', 'E'], ['Ѕ', 'S'], ['І', 'I'], ['Ј', 'J'], ['К', 'K'], ['М', 'M'], ['Н', 'H'],
  ['О', 'O'], ['Р', 'P'], ['С', 'C'], ['Т', 'T'], ['Х', 'X'], ['У', 'Y'], ['Ү', 'Y'], ['Ԛ', 'Q'], ['Ԝ', 'W'],
  ['Һ', 'H'], ['Ӏ', 'I'], ['Ԁ', 'D'], ['Ѵ', 'V'],
  // Cyrillic small letters
  ['а', 'a'], ['е', 'e'], ['ѕ', 's'], ['і', 'i'], ['ј', 'j'], ['о', 'o'], ['р', 'p'], ['с', 'c'], ['х', 'x'],
  ['у', 'y'], ['ү', 'y'], ['к', 'k'], ['һ', 'h'], ['ԁ', 'd'], ['ԛ', 'q'], ['ԝ', 'w'], ['ӏ', 'l'], ['ѵ', 'v'], ['ɡ', 'g'],
  // Greek capitals
  ['Α', 'A'], ['Β', 'B'], ['Ε', 'E'], ['Ζ', 'Z'], ['Η', 'H'], ['Ι', 'I'], ['Κ', 'K'], ['Μ', 'M'], ['Ν', 'N'],
  ['Ο', 'O'], ['Ρ', 'P'], ['Τ', 'T'], ['Υ', 'Y'], ['Χ', 'X'], ['Ϲ', 'C'], ['Ϳ', 'J'],
  // Greek small letters
  ['ο', 'o'], ['ν', 'v'], ['α', 'a'], ['ι', 'i'], ['κ', 'k'], ['ρ', 'p'], ['υ', 'u'], ['χ', 'x'], ['ϲ', 'c'],
  ['ϳ', 'j'],
  // Latin and Armenian confusables
  ['ı', 'i'], ['ȷ', 'j'], ['ɑ', 'a'], ['ɩ', 'i'], ['ʀ', 'R'], ['օ', 'o'], ['ս', 'u'], ['հ', 'h'], ['ց', 'g'],
  // Dashes and minus signs: `sk‐proj` with U+2010 must still read as `sk-proj`.
  ['‐', '-'], ['‑', '-'], ['‒', '-'], ['–', '-'], ['—', '-'], ['―', '-'], ['−', '-'], ['⁃', '-'], ['˗', '-'],
  ['﹘', '-'], ['ー', '-'],
  // Slash look-alikes (base64 alphabet)
  ['∕', '/'], ['⁄', '/'], ['⧸', '/'],
  // Line and paragraph separators read as line breaks (PEM bodies are line-oriented).
  ['\u2028', '\n'], ['\u2029', '\n'],
];

export const HOMOGLYPHS: ReadonlyMap<number, string> = new Map(PAIRS.map(([from, to]) => [from.codePointAt(0)!, to]));
