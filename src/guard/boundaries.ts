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
import type { Normalised } from './normalise.js';
import { findSecrets, findSecretsAcross, type SecretHit, type SecretScanOptions } from './secrets.js';
import type { SecretKind } from './types.js';

export type Push = (slot: number, hit: Omit<SecretHit, 'start' | 'end'>, start: number, end: number) => void;

/** How far on each side of a text boundary the boundary pass reads (more than the longest key block). */
const BOUNDARY_WINDOW = 32 * 1024;

/** "OpenAI" in base64: every OpenAI key carries it, with as many characters after it as before it. */
const OPENAI_MARKER = 'T3BlbkFJ';
const OPENAI_BODY = /^sk-(?:(?:proj|svcacct|admin)-)?/;
const KEY_CHARS = /^[A-Za-z0-9_-]*$/;

/**
 * Where a plainly written OpenAI key that starts at `start` of `joined` and was read to `end` really ends:
 * when its marker shows, as many characters after the marker as its body has before it. Any other hit keeps
 * its end.
 */
function splitReach(kind: SecretKind, joined: string, start: number, end: number): number {
  if (kind !== 'openai-key' || !KEY_CHARS.test(joined.slice(start, end))) return end;
  const body = start + (OPENAI_BODY.exec(joined.slice(start, start + 11))?.[0].length ?? 0);
  const marker = joined.indexOf(OPENAI_MARKER, body);
  if (marker === -1 || marker + OPENAI_MARKER.length > end) return end;
  return Math.min(end, marker + OPENAI_MARKER.length + (marker - body));
}

/**
 * The texts `order` joined with nothing between them, read around each boundary: a hit that starts in one
 * text and ends in another is a split secret, reported to `push` once per text it touches. Hits inside one
 * text were already found by the per-text pass. Only a window on each side of a boundary is read, so long
 * texts are not scanned twice; a secret longer than the window split far from its start is masked only in
 * part (the first text's part, by the per-text pass). Of a window, usually only the few words around the
 * boundary a secret could be made of are read (findSecretsAcross).
 */
export function boundaryPass(norm: readonly Normalised[], order: readonly number[], union: SecretScanOptions, push: Push): void {
  if (order.length < 2) return;
  const offsets: number[] = [];
  let joined = '';
  for (const i of order) {
    offsets.push(joined.length);
    joined += norm[i]!.text;
  }
  const at = (pos: number): number => {
    let lo = 0;
    let hi = offsets.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (offsets[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
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
    const region = from === 0 && to === joined.length ? joined : joined.slice(from, to);
    for (const hit of findSecretsAcross(
      region,
      cuts.map((c) => c - from),
      union,
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
      const end = Math.min(hit.via === undefined ? splitReach(h.kind, joined, start, h.end) : h.end, offsets[next]! + norm[order[next]!]!.text.length);
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
