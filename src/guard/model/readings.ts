/**
 * What the intent model reads of a request: bounded pieces ("readings"), never the whole of a large body,
 * since the encoder's cost grows faster than the text (attention is quadratic within its 512-token window).
 *
 *  - A request whose texts fit in `chars` is read whole, as one reading.
 *  - A longer one is cut at sentence and line ends into windows of at most half a reading, each window
 *    starting on the last sentence of the one before (an ask split over two sentences is whole in one
 *    window), over every text. A short ask buried in a long report is then most of its window instead of a
 *    tenth of one reading (mean pooling would dilute it away).
 *  - A conversation whose last user turn is not the whole request is also read as that turn on its own (an
 *    ask that earlier benign turns would dilute) and as its end in context (the last `chars` characters,
 *    where "now do it for real" still carries the turns it refers to).
 *
 * A single text has no end in context to read: its last window is its end.
 *
 * The two most ask-like sentences of a long request are also read on their own, so a one-line ask decides
 * without the sentence of report text its window shares with it; with `askSentencesFrom`, those of a request
 * that fits in one reading but is at least that long too (a head file asks for it: head.ts `readings`).
 *
 * At most `max` readings: the last user turn, the end in context, the ask-like sentences, then the windows. When there are more
 * windows than room, the most ask-like are read (`askScore`: topic terms found by the first pass, ask
 * and imperative words of a dozen languages, question marks), later ones first on a tie. So the cost of a
 * call is bounded by `max` readings of at most `chars` characters whatever its size; choosing among windows
 * is linear in the text.
 *
 * The model reads the text as written, not the detectors' normal form: folding look-alike letters and
 * dropping combining marks (normalise.ts) is right for matching English terms and key shapes but would turn
 * Cyrillic, Arabic or Devanagari into noise. Only compatibility forms (NFKC) and invisible format
 * characters are undone here, so zero-width padding cannot split a word the encoder would otherwise see.
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;
// ASCII (U+0000 to U+007F) is its own NFKC form and holds no invisible or format character: such a text
// (most requests) is read as it is, without the normalisation's and the replacement's passes over it. A text
// is ASCII exactly when its UTF-8 form has a byte per UTF-16 unit (any other unit, a lone surrogate
// included, takes two or three), and Node counts those bytes with SIMD: a fifth of the time of the
// `/^\p{ASCII}*$/u` test it replaces, which was 2 % of a 100 KB call.
const isAscii = (text: string): boolean => Buffer.byteLength(text, 'utf8') === text.length;

export function modelText(text: string): string {
  if (isAscii(text)) return text;
  return text.normalize('NFKC').replace(INVISIBLE, '');
}

export interface ReadingOptions {
  chars: number;
  max: number;
  /**
   * A request of at least this many characters that fits in one reading is also read as its most ask-like sentences
   * on their own (as a longer one is), so an ask buried in a few hundred characters of benign text is not pooled away
   * by them in the one whole reading. Absent: a request that fits is read whole and only whole.
   */
  askSentencesFrom?: number;
}

/** A window: text index and character range. */
interface Window {
  t: number;
  a: number;
  b: number;
}

// Sentence ends (Latin, CJK, Arabic, Devanagari full stops) followed by space, and line breaks.
const SENTENCE_END = /[.!?;:。！？；؟۔।]+["'”’»)\]]*\s+|[。！？]|\n+/gu;

/** Sentence spans [start, end) of one text, none longer than `width` (longer ones are cut). */
export function sentencesOf(text: string, width: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = 0;
  const push = (a: number, b: number) => {
    while (b - a > width) {
      // Cut a long run at its last space inside the width, else hard.
      const sp = text.lastIndexOf(' ', a + width);
      const cut = sp > a + width / 2 ? sp + 1 : a + width;
      out.push([a, cut]);
      a = cut;
    }
    if (text.slice(a, b).trim() !== '') out.push([a, b]);
  };
  for (const m of text.matchAll(SENTENCE_END)) {
    const end = m.index + m[0].length;
    push(start, end);
    start = end;
  }
  push(start, text.length);
  return out;
}

/** Windows of whole sentences of at most `width` characters, each starting on the last sentence of the previous one. */
export function windowsOf(text: string, t: number, width: number): Window[] {
  const s = sentencesOf(text, width);
  const out: Window[] = [];
  let i = 0;
  while (i < s.length) {
    let j = i;
    while (j + 1 < s.length && s[j + 1]![1] - s[i]![0] <= width) j++;
    out.push({ t, a: s[i]![0], b: s[j]![1] });
    if (j + 1 >= s.length) break;
    i = j > i ? j : j + 1;
  }
  return out;
}

// Words that make a sentence an ask, in the languages the corpus holds: request verbs, "how", "step",
// "exact", "recipe", "quantities". Matched case-insensitively as substrings (no word boundaries in CJK).
const ASK = new RegExp(
  [
    'how (?:do|can|to|would|could)',
    'step',
    'exact',
    'give me',
    'tell me',
    'show me',
    'walk me',
    'explain',
    'write',
    'make',
    'recipe',
    'quantit',
    'instruction',
    'translate',
    'pretend',
    'imagine',
    'in character',
    'cómo',
    'como ',
    'paso',
    'dame',
    'dime',
    'explica',
    'escrib',
    'traduc',
    'receta',
    'cantidad',
    'passo',
    'diga',
    'mostre',
    'wie ',
    'schritt',
    'anleitung',
    'erklär',
    'schreib',
    'übersetz',
    'genau',
    'menge',
    'gib mir',
    'как ',
    'шаг',
    'инструкц',
    'объясн',
    'напиши',
    'переведи',
    'рецепт',
    'точн',
    'дай ',
    'расскажи',
    'comment',
    'étape',
    'donne',
    'explique',
    'écri',
    'tradui',
    'recette',
    'quantité',
    'come ',
    'spiega',
    'scrivi',
    'tradu',
    'dimmi',
    'nasıl',
    'adım',
    'tarif',
    'anlat',
    'yaz',
    'çevir',
    'كيف',
    'خطوات',
    'اشرح',
    'اكتب',
    'ترجم',
    'أعطني',
    'طريقة',
    '如何',
    '怎么',
    '怎样',
    '步骤',
    '告诉我',
    '给我',
    '翻译',
    '配方',
    '详细',
    'どうやって',
    '方法',
    '手順',
    '教えて',
    '翻訳',
    '作り方',
    '어떻게',
    '방법',
    '단계',
    '알려',
    '번역',
    '만드는',
  ].join('|'),
  'giu',
);

/** Sentences read on their own in a long request (the most ask-like ones). */
const ASK_SENTENCES = 2;

/** How much a window reads like an ask: first-pass topic terms weigh most, then ask words, then a question mark. */
export function askScore(text: string, topicHits: number): number {
  const asks = Math.min(4, text.match(ASK)?.length ?? 0);
  return topicHits * 4 + asks * 2 + (/[?？؟]/u.test(text) ? 1 : 0);
}

/**
 * Readings of `texts` (already modelText'd, in reading order). `spots` are [text index, offset] of topic
 * terms in those texts (offsets approximate after modelText, which only removed invisible characters: fine
 * for choosing a window). `lastUser` is the index of the last user turn's text, if the request has turns.
 */
export function readingsOf(texts: readonly string[], spots: ReadonlyArray<readonly [number, number]>, o: ReadingOptions, lastUser?: number): string[] {
  const present = texts.map((t, i) => [t, i] as const).filter(([t]) => t.trim() !== '');
  const whole = present.map(([t]) => t).join('\n');
  if (whole === '') return [];
  const out: string[] = [];
  const add = (r: string) => {
    if (r.trim() !== '' && !out.includes(r) && out.length < o.max) out.push(r);
  };
  const turn = lastUser !== undefined && present.length > 1 ? texts[lastUser] : undefined;
  const width = Math.floor(o.chars / 2);
  const hitsIn = (t: number, a: number, b: number) => spots.filter(([st, off]) => st === t && off >= a && off < b).length;
  // The most ask-like sentences on their own: a one-line ask then decides without any filler around it.
  const askSentences = () => {
    const sentences = present
      .flatMap(([t, i]) => sentencesOf(t, width).map(([a, b]) => ({ text: t.slice(a, b).trim(), s: askScore(t.slice(a, b), hitsIn(i, a, b)) })))
      .map((x, k) => ({ ...x, k }))
      .filter((x) => x.s > 0 && x.text.length >= 20);
    sentences.sort((x, y) => y.s - x.s || y.k - x.k);
    for (const x of sentences.slice(0, ASK_SENTENCES)) add(x.text);
  };
  if (whole.length <= o.chars) {
    add(whole);
    if (turn !== undefined && turn.trim() !== '') add(turn);
    if (o.askSentencesFrom !== undefined && whole.length >= o.askSentencesFrom) askSentences();
    return out;
  }
  if (turn !== undefined && turn.trim() !== '') {
    if (turn.length <= o.chars) add(turn);
    add(whole.slice(-o.chars));
  }
  askSentences();
  const windows = present.flatMap(([t, i]) => windowsOf(t, i, width));
  const room = o.max - out.length;
  let chosen = windows;
  if (windows.length > room) {
    const scored = windows.map((w, k) => {
      return { k, s: askScore(texts[w.t]!.slice(w.a, w.b), hitsIn(w.t, w.a, w.b)) };
    });
    scored.sort((x, y) => y.s - x.s || y.k - x.k);
    const keep = new Set(scored.slice(0, Math.max(0, room)).map((x) => x.k));
    chosen = windows.filter((_, k) => keep.has(k));
  }
  for (const w of chosen) add(texts[w.t]!.slice(w.a, w.b));
  return out;
}
