/**
 * What the intent model reads of a request: a few bounded pieces ("readings"), never the whole of a large
 * body, since the encoder's cost grows faster than the text (attention is quadratic within its 512-token
 * window). A request whose texts fit in `chars` is read whole; a longer one is read around its topic terms
 * (the first pass's hits, windows of half a reading, merged where they overlap, up to a reading) and at its
 * end, where an ask usually is, at most `max` readings of at most `chars` characters each. The model's verdict is the most harmful reading's.
 *
 * The model reads the text as written, not the detectors' normal form: folding look-alike letters and
 * dropping combining marks (normalise.ts) is right for matching English terms and key shapes but would turn
 * Cyrillic, Arabic or Devanagari into noise. Only compatibility forms (NFKC) and invisible format
 * characters are undone here, so zero-width padding cannot split a word the encoder would otherwise see.
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;

export function modelText(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '');
}

export interface ReadingOptions {
  chars: number;
  max: number;
}

/**
 * Readings of `texts` (already modelText'd, in reading order). `spots` are [text index, offset] of topic
 * terms in those texts; offsets are approximate after modelText (only invisible characters were removed),
 * which is fine for choosing a window.
 */
export function readingsOf(texts: readonly string[], spots: ReadonlyArray<readonly [number, number]>, o: ReadingOptions): string[] {
  const whole = texts.filter((t) => t !== '').join('\n');
  if (whole.length <= o.chars) return whole === '' ? [] : [whole];
  // Windows are half a reading wide: mean pooling dilutes a short ask in a long window of filler.
  const width = Math.floor(o.chars / 2);
  const half = Math.floor(width / 2);
  const out: string[] = [];
  // Windows around topic terms, per text, merged when they overlap; the last ones first (an ask is usually
  // late), keeping one place for the tail.
  const windows: Array<[number, number, number]> = [];
  const byText = new Map<number, number[]>();
  for (const [t, off] of spots) (byText.get(t) ?? byText.set(t, []).get(t)!).push(off);
  for (const [t, offs] of [...byText.entries()].sort((a, b) => a[0] - b[0])) {
    const len = texts[t]!.length;
    let from = -1;
    let to = -1;
    for (const off of [...new Set(offs)].sort((a, b) => a - b)) {
      const a = Math.max(0, Math.min(off, len) - half);
      const b = Math.min(len, a + width);
      if (a <= to && b - from <= o.chars) to = b;
      else {
        if (to > from) windows.push([t, from, to]);
        from = a;
        to = b;
      }
    }
    if (to > from) windows.push([t, from, to]);
  }
  const tail = whole.slice(-o.chars);
  for (const [t, a, b] of windows.slice(-(o.max - 1)).reverse()) {
    const w = texts[t]!.slice(a, b);
    if (!tail.includes(w)) out.push(w);
  }
  out.push(tail);
  return out.slice(0, o.max);
}
