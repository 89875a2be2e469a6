/**
 * The lexical classifier: term lists from the rules file, matched on whole words of normalised text. It is
 * the built-in floor of the block rules, not a judge of intent; the external moderation classifier plugs in
 * beside it through the same Classifier interface.
 *
 * Words: normalised text (normalise.ts) folded by words.ts - lowercase, any punctuation a separator (so
 * `weapons-grade` reads as `weapons grade`), leetspeak undone inside words (`s4r1n`), letters spelled out one
 * by one joined (`s a r i n`). Terms are folded by the same code when compiled, so both sides agree.
 *
 * A detector fires on `any` term, or on a `near` group: a term of every named set within `within` words.
 * Terms are literal; a trailing `*` makes the last word a prefix (`weaponi*`). Operator-written regular
 * expressions are deliberately not accepted: they could not be held to linear time.
 *
 * Matching is a walk of one word trie built at compile time, shared by every detector and keyed by word
 * hashes: for each word, follow the trie at most as many words as the longest term (a hash narrows, the
 * folded word confirms). Linear in the number of words; near groups are a sliding window over the hits.
 * Most words start no term, and a bit table of the root's hashes says so before any map is consulted.
 *
 * A multi-word term written with every word spelled out (`c h i l d p o r n`) arrives as one spelled-out
 * word, `childporn`: the spelled-out letters carry no word breaks. So each multi-word term is also compiled
 * as its words joined, in a second trie of one-word edges read only for spelled-out words. Words written
 * whole never reach it, so a term's joined form that is an ordinary word (`the rapist`, `therapist`) does not
 * fire on that word. The `any` terms of a block rule are explicit and have no innocent spelling: they are
 * also read squeezed (squeezed.ts), their words joined and whatever surrounds or disguises their letters;
 * with the compiled scanner that reading runs in the module and its hits are handed to `matchStream`.
 *
 * The walk yields hits (term, first word, last word: `hits`); the findings are built from them. With the
 * compiled scanner (compiled.ts `readWords`) the walk runs in the module instead, over the word stream it
 * cut, from the same terms (`terms`), for the lexical detectors and the intent topics in one pass; the
 * findings are built here from its hits alike, and the walk here stays the reference it is tested against.
 */
import type { Action, Classifier, ClassifierText, Finding, NearDoc } from './types.js';
import { normalise } from './normalise.js';
import { SqueezedMatcher, squeezeTerm, type SqueezedTerm } from './squeezed.js';
import { foldWords, hashWord, PREFIX_LENGTH as MIN_PREFIX, WordStream } from './words.js';

/** What the compiled scanner found for one matcher (compiled.ts `readWords`): see `matchStream`. */
export interface CompiledHits {
  words?: ArrayLike<number>;
  squeezed?: ArrayLike<number>;
}

export interface LexicalDetectorSpec {
  rule: string;
  action: Action;
  id: string;
  any: readonly string[];
  near: readonly NearDoc[];
}

/** The folded words of already-normalised text, as the lexical classifier sees them. */
export function lexicalWords(normalisedText: string): string[] {
  return foldWords(normalisedText);
}

interface Tag {
  detector: number;
  near: number; // -1 for an `any` term
  set: number;
}

type Edge = [word: string, node: TrieNode];

class TrieNode {
  /** Whole-word edges by word hash (a list: two words may share a hash). */
  readonly exact = new Map<number, Edge[]>();
  /** Prefix edges by the hash of their first three letters. */
  readonly prefixes = new Map<number, Edge[]>();
  readonly tags: number[] = [];
  get leaf(): boolean {
    return this.exact.size === 0 && this.prefixes.size === 0;
  }
}

function edgeTo(map: Map<number, Edge[]>, key: number, word: string): TrieNode {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  let edge = list.find(([w]) => w === word);
  if (!edge) list.push((edge = [word, new TrieNode()]));
  return edge[1];
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
    const ws = foldWords(normalise(prefix ? part.slice(0, -1) : part).text);
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

// One bit per value of a hash's low 16 bits: set when some term's first word (or prefix) has such a hash.
const FILTER_BITS = 16;
const FILTER_MASK = (1 << FILTER_BITS) - 1;
const inFilter = (filter: Uint32Array, h: number): boolean => (filter[(h & FILTER_MASK) >>> 5]! & (1 << (h & 31))) !== 0;
const addToFilter = (filter: Uint32Array, h: number): void => {
  filter[(h & FILTER_MASK) >>> 5]! |= 1 << (h & 31);
};

/** The compiled term lists of every lexical detector. */
export class LexicalMatcher {
  private readonly root = new TrieNode();
  /** Multi-word terms as one word (their words joined), for spelled-out words only. */
  private readonly joined = new TrieNode();
  private readonly tags: Tag[] = [];
  private readonly compiledTerms: Array<{ words: string[]; prefixLast: boolean; tag: number }> = [];
  private readonly nears: NearState[] = [];
  private maxWords = 1;
  private readonly startFilter = new Uint32Array((1 << FILTER_BITS) / 32);
  /**
   * One word stream for every `match` (allocating its arrays was most of a small request's cost): matches
   * never overlap, as matching is synchronous, and each resets it, so no request's text outlives its match.
   */
  private readonly words = new WordStream();
  /** The `any` terms of block rules, read squeezed. */
  readonly squeezed: SqueezedMatcher;

  /**
   * `squeeze`: the block rules' explicit terms are also read squeezed. The lexical rules' matcher does; the
   * intent detectors' topic prefilter does not (its topics are words whose every occurrence is no harm, and
   * squeezing hundreds of them cost four times the rest of a large request's scan).
   */
  constructor(
    readonly detectors: readonly LexicalDetectorSpec[],
    { squeeze = true }: { squeeze?: boolean } = {},
  ) {
    const squeezed: SqueezedTerm[] = [];
    detectors.forEach((d, di) => {
      for (const term of d.any) this.add(term, { detector: di, near: -1, set: 0 });
      if (squeeze && d.action === 'block') for (const term of d.any) squeezed.push({ detector: di, ...squeezeTerm(normalise(term).text) });
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
    this.squeezed = new SqueezedMatcher(squeezed);
    for (const key of this.root.exact.keys()) addToFilter(this.startFilter, key);
    for (const key of this.root.prefixes.keys()) addToFilter(this.startFilter, key);
  }

  private add(term: string, tag: Tag): void {
    const { words, prefixLast } = compileTerm(term);
    this.maxWords = Math.max(this.maxWords, words.length);
    let node = this.root;
    words.forEach((w, i) => {
      node = prefixLast && i === words.length - 1 ? edgeTo(node.prefixes, hashWord(w.slice(0, MIN_PREFIX)), w) : edgeTo(node.exact, hashWord(w), w);
    });
    node.tags.push(this.tags.length);
    this.compiledTerms.push({ words, prefixLast, tag: this.tags.length });
    if (words.length > 1) {
      const one = words.join('');
      const leaf = prefixLast ? edgeTo(this.joined.prefixes, hashWord(one.slice(0, MIN_PREFIX)), one) : edgeTo(this.joined.exact, hashWord(one), one);
      leaf.tags.push(this.tags.length);
    }
    this.tags.push(tag);
  }

  /** Findings for texts that are already normalised (normalise(...).text). */
  match(texts: ReadonlyArray<{ where: string; text: string }>): Finding[] {
    try {
      fillStream(this.words, texts);
      return this.matchWords(texts, this.words);
    } finally {
      this.words.reset();
    }
  }

  /**
   * As `match`, on a stream that already holds the words of `texts` (fillStream): several matchers read one
   * tokenisation of a request instead of one each. The stream is left as it was given. `found`, when
   * given, holds what the compiled scanner found for this matcher in `texts` and `ws`: the term lists' hits
   * (the numbers `hits` returns) and the squeezed reading's (the numbers `this.squeezed.hits` returns),
   * read instead of walking and squeezing here.
   */
  matchStream(texts: ReadonlyArray<{ where: string; text: string }>, ws: WordStream, found?: CompiledHits): Finding[] {
    return this.matchWords(texts, ws, undefined, found);
  }

  /** Where `any` terms start: detector id, text index and offset in that text (for readers that need context). */
  spots(texts: ReadonlyArray<{ where: string; text: string }>): Array<{ detector: string; text: number; offset: number }> {
    try {
      fillStream(this.words, texts);
      return this.spotsStream(texts, this.words);
    } finally {
      this.words.reset();
    }
  }

  /** As `spots`, on a stream that already holds the words of `texts` (fillStream); `found` as for `matchStream`. */
  spotsStream(
    texts: ReadonlyArray<{ where: string; text: string }>,
    ws: WordStream,
    found?: CompiledHits,
  ): Array<{ detector: string; text: number; offset: number }> {
    const out: Array<{ detector: number; text: number; offset: number }> = [];
    this.matchWords(texts, ws, out, found);
    return out.map((s) => ({ ...s, detector: this.detectors[s.detector]!.id }));
  }

  /**
   * Where terms occur in `ws`: per hit, three numbers - the tag (a term of a detector's `any` list or of a
   * near group's set), the word the term starts at and the word it ends at - in the order of the walk below.
   * The compiled scanner (scanner/src/lexicon.rs) finds the same hits in the same order from `terms`.
   */
  hits(ws: WordStream): number[] {
    const out: number[] = [];
    const record = (tagIds: readonly number[], start: number, end: number) => {
      for (const id of tagIds) out.push(id, start, end);
    };
    const walk = (node: TrieNode, j: number, start: number): void => {
      if (j >= ws.count || j - start >= this.maxWords) return;
      // Hashes only narrow the search; the folded word is compared before an edge is taken.
      for (const [word, next] of node.exact.get(ws.hash[j]!) ?? []) {
        if (!ws.matches(j, word, false)) continue;
        record(next.tags, start, j);
        if (!next.leaf) walk(next, j + 1, start);
      }
      if (ws.length[j]! >= MIN_PREFIX) {
        for (const [prefix, next] of node.prefixes.get(ws.prefix[j]!) ?? []) {
          if (!ws.matches(j, prefix, true)) continue;
          record(next.tags, start, j);
          if (!next.leaf) walk(next, j + 1, start);
        }
      }
    };
    // Most words start no term: a bit, or a map lookup or two, rules them out.
    const { root, startFilter: filter } = this;
    const { hash, length, prefix: prefixHash, count } = ws;
    for (let i = 0; i < count; i++) {
      const h = hash[i]!;
      const prefix = length[i]! >= MIN_PREFIX;
      if (!inFilter(filter, h) && !(prefix && inFilter(filter, prefixHash[i]!))) continue;
      if (root.exact.has(h) || (prefix && root.prefixes.has(prefixHash[i]!))) walk(root, i, i);
    }
    // Spelled-out words (rare) are also read against the joined forms of multi-word terms: one word each.
    const joined = this.joined;
    if (!joined.leaf) {
      for (let i = 0; i < count; i++) if (ws.spelled(i)) walk(joined, i, i);
    }
    return out;
  }

  /**
   * The terms as compiled, in the order they were added: each term's folded words, whether its last word is
   * a prefix, and its tag (what `hits` reports). The compiled scanner builds its own tries from these.
   */
  get terms(): ReadonlyArray<{ words: readonly string[]; prefixLast: boolean; tag: number }> {
    return this.compiledTerms;
  }

  private matchWords(
    texts: ReadonlyArray<{ where: string; text: string }>,
    ws: WordStream,
    spots?: Array<{ detector: number; text: number; offset: number }>,
    found?: CompiledHits,
  ): Finding[] {
    const slotOf = ws.text;
    const hits = found?.words ?? this.hits(ws);

    const anyHits = new Set<number>(); // detector * 2^20 + slot
    // Per near group: the word positions where a term of some set starts, in order.
    const events = this.nears.map(() => ({ pos: [] as number[], set: [] as number[] }));
    for (let k = 0; k + 2 < hits.length; k += 3) {
      const tag = this.tags[hits[k]!]!;
      const start = hits[k + 1]!;
      const end = hits[k + 2]!;
      if (tag.near < 0) {
        anyHits.add(tag.detector * 0x100000 + slotOf[end]!);
        spots?.push({ detector: tag.detector, text: slotOf[start]!, offset: ws.start[start]! });
      } else {
        const e = events[tag.near]!;
        e.pos.push(start);
        e.set.push(tag.set);
      }
    }

    const squeezed = found?.squeezed ?? this.squeezed.hits(texts);
    const terms = this.squeezed.terms;
    for (let k = 0; k + 1 < squeezed.length; k += 2) anyHits.add(terms[squeezed[k]!]!.detector * 0x100000 + squeezed[k + 1]!);

    const findings: Finding[] = [];
    const seen = new Set<string>();
    const emit = (detector: number, slot: number) => {
      const key = `${detector}\u0000${slot}`;
      if (seen.has(key)) return;
      seen.add(key);
      const d = this.detectors[detector]!;
      findings.push({ rule: d.rule, action: d.action, detector: d.id, where: texts[slot]!.where });
    };
    for (const key of anyHits) emit(Math.floor(key / 0x100000), key % 0x100000);
    this.nears.forEach((near, ni) => {
      const { pos, set } = events[ni]!;
      if (pos.length === 0) return;
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

/** Adds the words of `texts`, in order, to an empty stream (text i of the stream is texts[i]). */
export function fillStream(ws: WordStream, texts: ReadonlyArray<{ text: string }>): void {
  // Prose holds about one word in five or six characters: room for one in four, so it is made once.
  let chars = 0;
  for (const t of texts) chars += t.text.length;
  ws.reserve(chars >> 2);
  for (const t of texts) ws.add(t.text);
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
