/**
 * Keys split by the syntax of the text they are pasted in: a string concatenation (`"sk-proj-Ab3d" +
 * "Ef5h..."`, the concatenation operators of PHP, SQL, Lua, VB and others, `.concat(`, Python's and C's
 * adjacent literals), an interpolation inside a JS template literal (`` `sk-proj-Ab3d${""}Ef5h...` ``,
 * `${"Ef5h"}`, `${[]}` - any short interpolation is read as empty), a line continuation (a URL cut by `\` at
 * the end of a line in a shell, `^` in cmd; adjacent literals on lines continued by `\` in a C macro). Adjacent literals on one line count in double quotes only (C,
 * Python): single-quoted words side by side are a CSP or a shell's arguments. A compiler, a shell and a model all read the pieces as one string; so does this
 * pass: it removes the joining syntax and reads the text around each join again, with every detector, hits
 * mapped back to the original (a hit covers the pieces and the syntax between them).
 *
 * Only joins with key characters on both sides count (`"abc" + "def"`, not `"Hello, " + name`), and only the
 * text within WINDOW characters of one is read again (a key shape is at most a few hundred characters; a
 * private-key block in concatenated strings is found by its quoted lines, private-key.ts): ordinary code, full of concatenations of words and
 * variables, costs one regular-expression pass. Linear: each pattern is a bounded sequence anchored on a
 * literal, windows are merged, and the view is at most the text's length.
 */
import { lastAtOrBefore } from './sorted.js';

export interface JoinedView {
  text: string;
  /** Where unit `i` of the view came from in the text (a window's separator: where that window ends). */
  startOf(i: number): number;
  /** The end of what unit `i` of the view stands for (a window's separator stands for nothing: its start). */
  endOf(i: number): number;
}

// A join: quote, optional +, quote (spaces and one line break around the +; without the +, the line break may
// follow a backslash: C's adjacent literals in a `#define` continued over lines), `${}`/`${"`/`"}`, or a
// backslash at the end of a line (with the next line's indentation).
// Concatenation operators: + (JS, Java, C#, Python), . (PHP, Perl), .. (Lua), || (SQL), & (VB), ++ (Haskell),
// <> (Elixir), ~ (D, Raku); and a `.concat(` call.
const JOIN =
  /["'`][ \t]{0,8}(?:\r?\n[ \t]{0,32})?(?:\+\+?|\.\.?|\|\||&|<>|~)[ \t]{0,8}(?:\r?\n[ \t]{0,32})?["'`]|["'`]\)?\.concat\([ \t]{0,4}["'`]|["'][ \t]{0,8}\\?\r?\n[ \t]{0,32}["']|"[ \t]{1,4}"|\$\{[ \t]{0,4}(?:""|''|``)?[ \t]{0,4}\}|\$\{[ \t]{0,4}["'`]|\$\{[^{}"'`\r\n]{1,24}\}|["'`][ \t]{0,4}\}|[\\^]\r?\n[ \t]{0,32}/g;
const QUICK = /["'`][ \t]{0,8}[-+.|&<~\r\n)]|"[ \t]{1,4}"|\$\{|[\\^]\r?\n/;
const WINDOW = 320;
const MIN_SIDE = 3;

const isKeyChar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c >= 0x61 && c <= 0x7a) ||
  c === 0x2d ||
  c === 0x5f ||
  c === 0x2f ||
  c === 0x2b ||
  c === 0x3d ||
  c === 0x2e;

/** Are there at least MIN_SIDE key characters just before `at` and just after `to`? */
function keyOnBothSides(text: string, at: number, to: number): boolean {
  for (let k = 1; k <= MIN_SIDE; k++) if (at - k < 0 || !isKeyChar(text.charCodeAt(at - k))) return false;
  for (let k = 0; k < MIN_SIDE; k++) if (to + k >= text.length || !isKeyChar(text.charCodeAt(to + k))) return false;
  return true;
}

/**
 * The matches of JOIN in `text` (start, end of each, in order), or null when QUICK finds nothing (then no
 * join is read). The compiled scanner finds the same in its reading of the text (scanner/src/joins.rs).
 */
export function joinMatches(text: string): number[] | null {
  if (!QUICK.test(text)) return null;
  const out: number[] = [];
  const re = JOIN;
  re.lastIndex = 0;
  for (let m: RegExpExecArray | null; (m = re.exec(text)) !== null;) out.push(m.index, m.index + m[0].length);
  return out;
}

/**
 * The windows around key-joining syntax, with that syntax removed, and where each character came from;
 * windows are separated by a NUL (no hit holds one). Null when the text has no such join. `matches`: what
 * joinMatches(text) gives, when another engine found it (the compiled scanner's search).
 */
export function joinedView(text: string, matches: ArrayLike<number> | null = joinMatches(text)): JoinedView | null {
  if (matches === null) return null;
  const joins: number[] = []; // start, end of each join that has key characters on both sides
  for (let k = 0; k < matches.length; k += 2) {
    const at = matches[k]!;
    const to = matches[k + 1]!;
    // `${` and `"}` of a literal interpolation have the key on one side only: `abc${"def"}ghi`.
    const c = text.charCodeAt(at);
    const oneSided = c === 0x24 ? text.charCodeAt(to - 1) !== 0x7d : text.charCodeAt(to - 1) === 0x7d;
    if (oneSided ? isKeyChar(text.charCodeAt(at - 1)) || isKeyChar(text.charCodeAt(to)) : keyOnBothSides(text, at, to)) joins.push(at, to);
  }
  if (joins.length === 0) return null;
  const n = text.length;
  // Where each stretch of the view starts in it (`at`) and in the text (`from`, or -1 - the window's end for a
  // separator): a hit maps back through these, where a table of every unit's place was allocated and filled
  // (two arrays of the view's length: 4 MiB for a joined request of 524,288 units, each text's again).
  const at: number[] = [];
  const from: number[] = [];
  const parts: string[] = [];
  let length = 0;
  const copy = (a: number, b: number) => {
    if (b <= a) return;
    at.push(length);
    from.push(a);
    length += b - a;
    parts.push(text.slice(a, b));
  };
  let windowEnd = -1; // end of the current window in `text`
  let done = 0; // text[.., done) is done
  for (let k = 0; k < joins.length; k += 2) {
    const s = joins[k]!;
    const e = joins[k + 1]!;
    if (s - WINDOW > windowEnd) {
      // A new window: close the last one, separate.
      if (windowEnd >= 0) {
        copy(done, windowEnd);
        parts.push('\u0000');
        at.push(length);
        from.push(-1 - windowEnd);
        length++;
      }
      done = Math.max(0, s - WINDOW);
    }
    copy(done, s);
    done = e;
    windowEnd = Math.min(n, e + WINDOW);
  }
  copy(done, windowEnd);
  /** The stretch unit `i` of the view is in. */
  const stretch = (i: number): number => Math.max(0, lastAtOrBefore(at, i));
  const startOf = (i: number): number => {
    const k = stretch(i);
    return from[k]! < 0 ? -1 - from[k]! : from[k]! + i - at[k]!;
  };
  const endOf = (i: number): number => {
    const k = stretch(i);
    return from[k]! < 0 ? -1 - from[k]! : from[k]! + i - at[k]! + 1;
  };
  return { text: parts.join(''), startOf, endOf };
}
