/**
 * The boundary pass: secrets split across two texts - the end of one message and the start of the next, or
 * a message and a tool result. The texts are joined in reading order with nothing between them and read
 * again around each boundary; a hit that starts in one text and ends in another is reported for every
 * text it touches, in that text's own coordinates, so each half is masked where it stands.
 *
 * Joining with nothing between makes a complete key followed by a text that starts with key characters read
 * as one longer key (`sk-proj-…` + `region0` + `thanks1` …). So a split is of two texts: a hit reaches no
 * further than the end of the text after the one it starts in, and an OpenAI key, whose `T3BlbkFJ` marker
 * fixes where it ends, no further than that (splitReach). Without those bounds one key took every short text
 * after it into its mask.
 */
import { holdsHtmlRef } from './decoders.js';
import { KEYWORDS } from './generic.js';
import { isTokenCode, type LacedReading } from './laced.js';
import { foldCodePoint, type Normalised } from './normalise.js';
import { derStarts } from './private-key.js';
import { lastAtOrBefore } from './sorted.js';
import {
  ANCHOR_GROUP_BITS,
  ANCHOR_GROUPS,
  anchorStarts,
  findSecrets,
  findSecretsAcross,
  type Searched,
  type SecretHit,
  type SecretScanOptions,
} from './secrets.js';
import type { SecretKind } from './types.js';

export type Push = (slot: number, hit: Omit<SecretHit, 'start' | 'end'>, start: number, end: number) => void;

/**
 * From this many units on, a whole reading of joined texts is searched from the texts' own searches
 * (stitchedSearch); below it, searching the joined text costs less than finding the stretches to search.
 */
const STITCH_FROM = 16 * 1024;

/** How far on each side of a text boundary the boundary pass reads (more than the longest key block). */
const BOUNDARY_WINDOW = 32 * 1024;

/** "OpenAI" in base64: every OpenAI key carries it, with as many characters after it as before it. */
const OPENAI_MARKER = 'T3BlbkFJ';
const OPENAI_BODY = /^sk-(?:(?:proj|svcacct|admin)-)?/;

/**
 * Where an OpenAI key that starts at `start` of `joined` and was read to `end` really ends: when its marker
 * shows, as many key characters after the marker as its body has before it. The key's characters are
 * counted, not the text's, so a key laced with separators (`sk-… T3BlbkFJ …`) ends where its last piece does
 * and takes no word after it. Any other hit keeps its end.
 */
function splitReach(kind: SecretKind, joined: string, start: number, end: number, cutPairs: ReadonlyMap<number, string>): number {
  if (kind !== 'openai-key') return end;
  // The key's own characters, and where each is. A character cut in two by a boundary (cutPairs: its fold,
  // at the boundary's offset) is in neither text's reading, yet is one of the key's: counted, at the unit
  // before the cut.
  let key = '';
  const at: number[] = [];
  for (let i = start; i < end; i++) {
    const cut = i > start ? cutPairs.get(i) : undefined;
    if (cut !== undefined) {
      for (let k = 0; k < cut.length; k++) {
        if (!isTokenCode(cut.charCodeAt(k))) continue;
        key += cut[k];
        at.push(i - 1);
      }
    }
    if (!isTokenCode(joined.charCodeAt(i))) continue;
    key += joined[i];
    at.push(i);
  }
  const body = OPENAI_BODY.exec(key)?.[0].length ?? 0;
  const marker = key.indexOf(OPENAI_MARKER, body);
  if (marker === -1) return end;
  const last = marker + OPENAI_MARKER.length + (marker - body);
  return last >= key.length ? end : at[last - 1]! + 1;
}

/**
 * The texts `order` joined with nothing between them, read around each boundary: a hit that starts in one
 * text and ends in another is a split secret, reported to `push` once per text it touches. Hits inside one
 * text were already found by the per-text pass. Only a window on each side of a boundary is read, so long
 * texts are not scanned twice; a secret longer than the window split far from its start is masked only in
 * part (the first text's part, by the per-text pass). Of a window, usually only the few words around the
 * boundary a secret could be made of are read (findSecretsAcross).
 */
export function boundaryPass(norm: readonly Normalised[], order: readonly number[], options: SecretScanOptions, push: Push): void {
  if (order.length < 2) return;
  // The texts' searches, kept by the per-text pass, serve the reading of the joined texts; the readings below
  // keep none of their own.
  const { searched, ...union } = options;
  const offsets: number[] = [];
  let joined = '';
  // Where a boundary cuts a surrogate pair in two (a text ending with its high half, the next starting with
  // its low half): the joined offset of the boundary, and the fold of the character cut (neither half is
  // read: a lone surrogate normalises to nothing).
  const cutPairs = new Map<number, string>();
  order.forEach((i, k) => {
    if (k > 0) {
      const before = norm[order[k - 1]!]!.original;
      const high = before.charCodeAt(before.length - 1);
      const low = norm[i]!.original.charCodeAt(0);
      if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff)
        cutPairs.set(joined.length, foldCodePoint(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)));
    }
    offsets.push(joined.length);
    joined += norm[i]!.text;
  });
  const at = (pos: number): number => Math.max(0, lastAtOrBefore(offsets, pos));
  // joined[from, to) made of the texts' own slices: a slice of `joined` itself would first flatten the whole
  // of it (a copy of every text, 100 KB at a 100 KB call) for a window of at most twice BOUNDARY_WINDOW.
  const regionOf = (from: number, to: number): string => {
    let region = '';
    order.forEach((i, k) => {
      const text = norm[i]!.text;
      const a = Math.max(from - offsets[k]!, 0);
      const b = Math.min(to - offsets[k]!, text.length);
      if (a < b) region += a === 0 && b === text.length ? text : text.slice(a, b);
    });
    return region;
  };
  // Windows around every boundary, merged where they overlap, with the boundaries inside each.
  const regions: Array<{ from: number; to: number; cuts: number[] }> = [];
  for (let k = 1; k < offsets.length; k++) {
    const from = Math.max(0, offsets[k]! - BOUNDARY_WINDOW);
    const to = Math.min(joined.length, offsets[k]! + BOUNDARY_WINDOW);
    const last = regions[regions.length - 1];
    if (last && from <= last.to) last.to = Math.max(last.to, to);
    else regions.push({ from, to, cuts: [] });
    regions[regions.length - 1]!.cuts.push(offsets[k]!);
  }
  for (const { from, to, cuts } of regions) {
    const region = from === 0 && to === joined.length ? joined : regionOf(from, to);
    let opts = union;
    const passes = union.passes;
    if (passes && searched && region.length >= STITCH_FROM) {
      // A whole reading of the region is searched from the texts' own searches and the stretches around the cuts.
      const parts: Part[] = [];
      order.forEach((i, k) => {
        const at = Math.max(offsets[k]!, from);
        const end = Math.min(offsets[k]! + norm[i]!.text.length, to);
        if (at < end) parts.push({ at: at - from, text: norm[i]!.text, from: at - offsets[k]!, to: end - offsets[k]!, searched: searched[i] });
      });
      opts = { ...union, kept: { text: region, make: () => stitchedSearch(region, parts, (w) => passes.search(w)), laced: lacedOf(parts) } };
    }
    for (const hit of findSecretsAcross(
      region,
      cuts.map((c) => c - from),
      opts,
    )) {
      const h = { kind: hit.kind, start: hit.start + from, end: hit.end + from };
      let a = at(h.start);
      const b = at(h.end - 1);
      if (a === b) continue;
      // Joining glues a text's tail to the next text's head (`...ok` + a base64 run). If the hit survives
      // without the earlier text, that tail was not part of the secret: leave it alone. (The later side
      // cannot be told apart from a genuinely split key and is masked: erring toward masking.) Binary
      // search for the last text the hit can start in, one scan of the hit's length per step.
      let start = h.start;
      let hi = b;
      while (a < hi) {
        const mid = (a + hi + 1) >> 1;
        // Only a hit of the same kind counts - and for a private key one that starts with its header, not a
        // body read without it (the header split off is still the key's).
        const from = offsets[mid]!;
        const rest = findSecrets(joined.slice(from, h.end), union).filter(
          (r) => r.kind === h.kind && (h.kind !== 'private-key' || joined.charCodeAt(from + r.start) === 0x2d),
        );
        if (rest.length > 0) {
          a = mid;
          start = offsets[mid]! + rest.reduce((m, r) => Math.min(m, r.start), Infinity);
        } else hi = mid - 1;
      }
      // A private key header opens with a run of dashes of any length (2 to 10): when the split falls inside
      // it, the dashes before the split are the header's too.
      if (h.kind === 'private-key') {
        let dashes = 0;
        while (start > 0 && dashes < 10 && joined.charCodeAt(start - 1) === 0x2d) {
          start--;
          dashes++;
        }
      }
      a = at(start);
      // A split is of two texts: the hit ends where the text after its first one does, at the latest.
      const next = at(offsets[a]! + norm[order[a]!]!.text.length);
      const end = Math.min(
        hit.via === undefined ? splitReach(h.kind, joined, start, h.end, cutPairs) : h.end,
        offsets[next]! + norm[order[next]!]!.text.length,
      );
      const last = at(end - 1);
      if (a === last) continue;
      for (let k = a; k <= last; k++) {
        const fromK = k === a ? start - offsets[k]! : 0;
        const toK = k === last ? end - offsets[k]! : norm[order[k]!]!.text.length;
        push(order[k]!, { kind: h.kind, via: 'split' }, fromK, toK);
      }
    }
  }
}

/** A stretch of a text in a joined reading: text[from, to) at offset `at`, with the text's own search if kept. */
export interface Part {
  at: number;
  text: string;
  from: number;
  to: number;
  searched: Searched | undefined;
}

/**
 * The laced-key reading at offset `p` of a region made of `parts`, as the part's own text read it (its kept
 * Searched `laced`), when the part holds every unit that reading may have looked at (its reach): the region
 * holds the same units there, so its reading is the same. Otherwise undefined, and the region reads it.
 * Most of the joined request's laced readings are its texts' (the boundary pass read each of them twice).
 */
function lacedOf(parts: readonly Part[]): (p: number) => LacedReading | undefined {
  const ats = parts.map((part) => part.at);
  return (p) => {
    const part = parts[Math.max(0, lastAtOrBefore(ats, p))]!;
    const q = p - part.at + part.from;
    const reading = part.at <= p ? part.searched?.laced?.get(q) : undefined;
    return reading && q + reading.reach <= part.to ? reading : undefined;
  };
}

/**
 * Units no search of SecretPasses reads across: no key-like word or anchor literal holds one, and none is a
 * token character or a separator a laced key's prefix is read across (laced.ts), and no headerless key body's
 * start holds one (base64 units). A search result at an offset
 * depends only on the unit before it (the laced anchor's lookbehind) and the units from it up to the next
 * such unit; so between two of them, a text's own search and the joined texts' agree.
 */
const QUIET = new Uint8Array(128);
{
  const literals = [...KEYWORDS, ...ANCHOR_GROUPS.flat()].join('');
  for (const ch of '!#$%&()?@[]^{}') {
    const c = ch.charCodeAt(0);
    if (isTokenCode(c) || literals.includes(ch) || ' \t\r\n*`|>~.,;:"\'<\\'.includes(ch)) continue;
    QUIET[c] = 1;
  }
}
const isQuiet = (c: number): boolean => c < 128 && QUIET[c] === 1;

/**
 * What `search` finds in `region`, made of `parts` (in order, covering it), from the parts' own searches:
 * only the stretches around the places where the parts meet (and the region's ends, and parts without a kept
 * search) are searched again, each from the last quiet unit before it to the first one after it.
 */
export function stitchedSearch(region: string, parts: readonly Part[], search: (text: string) => Searched): Searched {
  const n = region.length;
  // The offsets searched again, [from, to), merged: around each part's start, around the region's end, and
  // over every part without a kept search (with its anchors). Each unit is looked at about once: the walk
  // back stops at the last stretch, and the walk on is remembered (texts without a quiet unit are common:
  // base64, a key block).
  const again: Array<[number, number]> = [];
  let walked = -1; // from where the last walk on started
  let quiet = -1; // and the quiet unit (or n) it found
  const add = (a: number, b: number) => {
    const last = again[again.length - 1];
    const floor = last ? last[1] : 0;
    let from = a;
    while (from > floor && !isQuiet(region.charCodeAt(from - 1))) from--;
    if (b < walked || b > quiet) {
      walked = b;
      quiet = b;
      while (quiet < n && !isQuiet(region.charCodeAt(quiet))) quiet++;
    }
    const to = quiet;
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else again.push([from, to]);
  };
  for (const part of parts) add(part.at, part.searched?.anchors && part.searched.ders ? part.at : part.at + part.to - part.from);
  add(n, n);
  const keywords: number[] = [];
  const laced: number[] = [];
  const anchors: number[] = [];
  const ders: number[] = [];
  const shift = 1 << ANCHOR_GROUP_BITS;
  /** Results of `s` (a search of text[base, ...)) at offsets [from, to) of the text, moved by `by`. */
  const take = (s: Searched, from: number, to: number, by: number) => {
    for (const p of s.keywordStarts) if (p >= from && p < to) keywords.push(p + by);
    const l = s.lacedCandidates;
    for (let k = 0; k < l.length; k++) if (l[k]! >= from && l[k]! < to) laced.push(l[k]! + by);
    const a = s.anchors!;
    for (let k = 0; k < a.length; k++) {
      const p = a[k]! >> ANCHOR_GROUP_BITS;
      if (p >= from && p < to) anchors.push(a[k]! + by * shift);
    }
    const d = s.ders!;
    for (let k = 0; k < d.length; k++) if (d[k]! >= from && d[k]! < to) ders.push(d[k]! + by);
  };
  let k = 0; // the part the next kept stretch is in
  let pos = 0;
  const kept = (to: number) => {
    // [pos, to) lies in one part (every part's start is in a stretch searched again, or starts a kept one).
    if (pos >= to) return;
    while (parts[k]!.at + parts[k]!.to - parts[k]!.from <= pos) k++;
    const part = parts[k]!;
    const by = part.at - part.from;
    take(part.searched!, pos - by, to - by, by);
  };
  for (const [from, to] of again) {
    kept(from);
    // With the quiet units on each side: the one before is what the laced anchor's lookbehind reads at the
    // stretch's first offset, the one after ends every reading in the stretch, as in the region.
    const a = Math.max(0, from - 1);
    const b = Math.min(n, to + 1);
    const text = region.slice(a, b);
    const s = search(text);
    take({ ...s, anchors: s.anchors ?? anchorStarts(text), ders: s.ders ?? derStarts(text) }, from - a, to - a, a);
    pos = to;
  }
  kept(n);
  return { keywordStarts: keywords, lacedCandidates: laced, anchors, ders, htmlRef: stitchedHtmlRef(region, parts) };
}

/** The longest HTML character reference holdsHtmlRef reads (`&`, a letter, 31 letters or digits, `;`), and one more. */
const LONGEST_REF = 35;

/**
 * holdsHtmlRef(region), from the parts' own answers: a reference lies inside one part (a whole part's search
 * says whether its text holds one; a part cut at the region's edge, or searched in TypeScript, is asked
 * here) or across a place where two parts meet, inside the units around it.
 */
function stitchedHtmlRef(region: string, parts: readonly Part[]): boolean {
  for (const part of parts) {
    const whole = part.from === 0 && part.to === part.text.length;
    const own = whole ? part.searched?.htmlRef : undefined;
    if (own ?? holdsHtmlRef(part.text.slice(part.from, part.to))) return true;
  }
  for (let k = 1; k < parts.length; k++) {
    const at = parts[k]!.at;
    if (holdsHtmlRef(region.slice(Math.max(0, at - LONGEST_REF), at + LONGEST_REF))) return true;
  }
  return false;
}
