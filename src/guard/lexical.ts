/**
 * The lexical classifier: term lists from the rules file, matched on whole words of normalised text. It is
 * the built-in floor of the block rules, not a judge of intent; the external moderation classifier plugs in
 * beside it through the same Classifier interface.
 *
 * Words: normalised text (normalise.ts) lowercased and cut into letter/digit runs; separators of every kind
 * (space, punctuation, `-`, `_`) are equal, so `weapons-grade` reads as `weapons grade`. Two more evasions
 * are undone: leetspeak digits inside a word that also has letters (`s4r1n` -> `sarin`; plain numbers are
 * left alone) and letters spelled out one by one (`s a r i n`, `s.a.r.i.n`: three or more single letters in a
 * row become one word). Terms are normalised the same way when compiled, so both sides always agree.
 *
 * A detector fires on `any` term, or on a `near` group: a term of every named set within `within` words.
 * Terms are literal; a trailing `*` makes the last word a prefix (`weaponi*`). Operator-written regular
 * expressions are deliberately not accepted: they could not be held to linear time.
 *
 * Matching is a walk of one word trie built at compile time, shared by every detector: for each word,
 * follow the trie at most as many words as the longest term. Linear in the number of words.
 */
import type { Action, Classifier, ClassifierText, Finding, NearDoc } from './types.js';
import { normalise } from './normalise.js';

export interface LexicalDetectorSpec {
  rule: string;
  action: Action;
  id: string;
  any: readonly string[];
  near: readonly NearDoc[];
}

const LEET: Readonly<Record<string, string>> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't' };
const MIN_PREFIX = 3;
// `s@rin`, `$arin`-style substitutions and apostrophes join the letters around them.
const JOINER = /(?<=[\p{L}\p{N}])[@$'’](?=[\p{L}\p{N}])/gu;
const ASCII_JOINER = /(?<=[a-z0-9])[@$'](?=[a-z0-9])/g;
// Words longer than 256 characters are cut; no term is that long. ASCII text (most of it) takes the
// plain class, which is several times faster than the Unicode property class.
const WORD = /[\p{L}\p{N}]{1,256}/gu;
const ASCII_WORD = /[a-z0-9]{1,256}/g;
const NON_ASCII = /[^\x00-\x7f]/;

const joinerValue = (j: string): string => (j === '@' ? 'a' : j === '$' ? 's' : '');

/** Leetspeak: digits inside a word that also has letters become the letters they stand for. */
function unleet(w: string): string {
  let digits = 0;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) digits++;
  }
  if (digits === 0 || digits === w.length) return w;
  let out = '';
  for (let i = 0; i < w.length; i++) out += LEET[w[i]!] ?? w[i]!;
  return out;
}

/** The words of already-normalised text, as the lexical classifier sees them. */
export function lexicalWords(normalisedText: string): string[] {
  let text = normalisedText.toLowerCase();
  const ascii = !NON_ASCII.test(text);
  text = text.replace(ascii ? ASCII_JOINER : JOINER, joinerValue);
  const raw = text.match(ascii ? ASCII_WORD : WORD) ?? [];
  const words: string[] = [];
  for (let k = 0; k < raw.length; ) {
    // Three or more single letters in a row are one spelled-out word (`s a r i n`).
    let e = k;
    while (e < raw.length && raw[e]!.length === 1 && raw[e]! > '9') e++;
    if (e - k >= 3) {
      words.push(raw.slice(k, e).join(''));
      k = e;
    } else {
      words.push(unleet(raw[k]!));
      k++;
    }
  }
  return words;
}

interface Tag {
  detector: number;
  near: number; // -1 for an `any` term
  set: number;
}

class TrieNode {
  readonly exact = new Map<string, TrieNode>();
  /** Prefix edges, indexed by their first three letters. */
  readonly prefixes = new Map<string, Array<[string, TrieNode]>>();
  readonly tags: number[] = [];
  get leaf(): boolean {
    return this.exact.size === 0 && this.prefixes.size === 0;
  }
}

interface CompiledTerm {
  words: string[];
  prefixLast: boolean;
}

/** A rules-file term as words; throws when it has none or its prefix is too short to be meaningful. */
export function compileTerm(term: string): CompiledTerm {
  const parts = term.trim().split(/\s+/);
  const words: string[] = [];
  let prefixLast = false;
  parts.forEach((part, i) => {
    const prefix = part.endsWith('*');
    if (prefix && i !== parts.length - 1) throw new Error(`term "${term}": only the last word may end with *`);
    const ws = lexicalWords(normalise(prefix ? part.slice(0, -1) : part).text);
    words.push(...ws);
    if (prefix) prefixLast = true;
  });
  if (words.length === 0) throw new Error(`term "${term}" has no words`);
  if (prefixLast && words[words.length - 1]!.length < MIN_PREFIX) {
    throw new Error(`term "${term}": a prefix needs at least ${MIN_PREFIX} letters before *`);
  }
  return { words, prefixLast };
}

interface NearState {
  detector: number;
  within: number;
  sets: number;
}

/** The compiled term lists of every lexical detector. */
export class LexicalMatcher {
  private readonly root = new TrieNode();
  private readonly tags: Tag[] = [];
  private readonly nears: NearState[] = [];
  private maxWords = 1;

  constructor(readonly detectors: readonly LexicalDetectorSpec[]) {
    detectors.forEach((d, di) => {
      for (const term of d.any) this.add(term, { detector: di, near: -1, set: 0 });
      d.near.forEach((group) => {
        const nearIndex = this.nears.length;
        const names = Object.keys(group.sets);
        if (names.length < 2) throw new Error(`detector ${d.id}: a near group needs at least two sets`);
        this.nears.push({ detector: di, within: group.within, sets: names.length });
        names.forEach((name, si) => {
          for (const term of group.sets[name]!) this.add(term, { detector: di, near: nearIndex, set: si });
        });
      });
    });
  }

  private add(term: string, tag: Tag): void {
    const { words, prefixLast } = compileTerm(term);
    this.maxWords = Math.max(this.maxWords, words.length);
    let node = this.root;
    words.forEach((w, i) => {
      if (prefixLast && i === words.length - 1) {
        const key = w.slice(0, MIN_PREFIX);
        let list = node.prefixes.get(key);
        if (!list) node.prefixes.set(key, (list = []));
        let edge = list.find(([p]) => p === w);
        if (!edge) list.push((edge = [w, new TrieNode()]));
        node = edge[1];
      } else {
        let next = node.exact.get(w);
        if (!next) node.exact.set(w, (next = new TrieNode()));
        node = next;
      }
    });
    node.tags.push(this.tags.length);
    this.tags.push(tag);
  }

  /** Findings for texts that are already normalised (normalise(...).text). */
  match(texts: ReadonlyArray<{ where: string; text: string }>): Finding[] {
    const words: string[] = [];
    const slotOf: number[] = [];
    texts.forEach((t, si) => {
      for (const w of lexicalWords(t.text)) {
        words.push(w);
        slotOf.push(si);
      }
    });

    const anyHits = new Set<string>(); // `${detector}\u0000${slot}`
    // Per near group: the word positions where a term of some set starts, in order.
    const events = this.nears.map(() => ({ pos: [] as number[], set: [] as number[] }));
    const record = (tagIds: readonly number[], start: number, end: number) => {
      for (const id of tagIds) {
        const tag = this.tags[id]!;
        if (tag.near < 0) anyHits.add(`${tag.detector}\u0000${slotOf[end]!}`);
        else {
          const e = events[tag.near]!;
          e.pos.push(start);
          e.set.push(tag.set);
        }
      }
    };
    const walk = (node: TrieNode, j: number, start: number): void => {
      const w = words[j];
      if (w === undefined || j - start >= this.maxWords) return;
      const next = node.exact.get(w);
      if (next) {
        record(next.tags, start, j);
        if (!next.leaf) walk(next, j + 1, start);
      }
      if (node.prefixes.size > 0 && w.length >= MIN_PREFIX) {
        for (const [p, child] of node.prefixes.get(w.slice(0, MIN_PREFIX)) ?? []) {
          if (!w.startsWith(p)) continue;
          record(child.tags, start, j);
          if (!child.leaf) walk(child, j + 1, start);
        }
      }
    };
    for (let i = 0; i < words.length; i++) walk(this.root, i, i);

    const findings: Finding[] = [];
    const seen = new Set<string>();
    const emit = (detector: number, slot: number) => {
      const key = `${detector}\u0000${slot}`;
      if (seen.has(key)) return;
      seen.add(key);
      const d = this.detectors[detector]!;
      findings.push({ rule: d.rule, action: d.action, detector: d.id, where: texts[slot]!.where });
    };
    for (const key of anyHits) {
      const [d, s] = key.split('\u0000');
      emit(Number(d), Number(s));
    }
    this.nears.forEach((near, ni) => {
      const { pos, set } = events[ni]!;
      const counts = new Array<number>(near.sets).fill(0);
      let present = 0;
      let left = 0;
      for (let right = 0; right < pos.length; right++) {
        if (counts[set[right]!]!++ === 0) present++;
        while (pos[right]! - pos[left]! > near.within) {
          if (--counts[set[left]!]! === 0) present--;
          left++;
        }
        if (present === near.sets) emit(near.detector, slotOf[pos[right]!]!);
      }
    });
    return findings;
  }
}

/** The lexical matcher behind the Classifier interface, for callers that treat all classifiers alike. */
export function lexicalClassifier(matcher: LexicalMatcher): Classifier & { classifySync(texts: readonly ClassifierText[]): Finding[] } {
  const classifySync = (texts: readonly ClassifierText[]) => matcher.match(texts.map((t) => ({ where: t.where, text: normalise(t.text).text })));
  return {
    id: 'lexical',
    classifySync,
    classify: async (texts) => classifySync(texts),
  };
}
