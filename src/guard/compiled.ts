/**
 * The compiled scanner: the guard's per-character passes run by a Rust crate compiled to WebAssembly
 * (scanner/, built by scripts/scanner-build.mjs into scanner/build/scanner.wasm, committed with the hash of
 * its sources). The TypeScript passes stay the reference: compileGuardrails({ engine: 'typescript' }) runs
 * them alone, and test/guard/scanner-equivalence.test.ts requires identical findings from both engines.
 *
 * What runs compiled: the word stream the lexical and intent matchers read (words.ts `add`), the walk of
 * their term lists over it (lexical.ts `hits`), the squeezed reading of the block rules' explicit terms over
 * the same texts (squeezed.ts `SqueezedMatcher`), all in one call (`readWords`), the normalisation of non-ASCII text (normalise.ts `normalise`) and the question whether a text is plain ASCII, and three searches of the secret pass, in
 * one reading of a text: where key-like words start (generic.ts `keywordStarts`), where a key laced with
 * separators may start (laced.ts `lacedCandidates`), and where the direct shapes' literal prefixes start
 * (secrets.ts `anchorStarts`: `sk-`, the AWS key-id prefixes, the provider prefixes, and what a reversed or
 * ROT13 secret holds), so their expressions run only there and no text is searched for those literals
 * natively; where a key split by the syntax around it may be joined (joins.ts `joinMatches`) and whether the
 * text holds an HTML character reference (decoders.ts `holdsHtmlRef`); where a private key body without its
 * header may start (private-key.ts `derStarts`); and where encoded runs may be (encodings.ts `scanRuns`, decoded in TypeScript: a base64 or hex run only at the
 * alignments the module says decode to something, `base64Readings`, `hexReadings`); the AWS secret access keys
 * in the windows after the places that name AWS (credentials.ts `awsSecretStarts`), whether a text holds an
 * INI section line (credentials.ts `iniSection`) and the lines holding a credential's name with whether each
 * may be a CSV header (`hintedLines`, `csvHeader`), from the text the search has just written; the joins of a text the search
 * has not read (the boundary pass's joined request: joins.ts `joinMatches`); and the intent
 * word scorer
 * (intent.ts `IntentScorer.score` of `intentWords`: the words cut and folded, their features hashed, the model's
 * rows summed; the softmax stays in TypeScript). The character classes and folds that depend on Unicode data are asked of the TypeScript side
 * (`isWordUnit`, `foldCodePoint`) once per code point and remembered by the module, so both engines read
 * every character with the same Unicode tables.
 *
 * The ABI (scanner/src/lib.rs): texts go in as UTF-16 units written into the module's input buffer; results
 * come back as typed-array views of its memory (offsets and hashes), read before the next call. One instance
 * per process serves every compiled runtime: each call is synchronous and leaves nothing for the next.
 *
 * A WebAssembly memory only grows: one large text (524,288 characters take it to about 22 MiB, against 2 MiB
 * at start and 5 MiB for a 100 KB call) would keep that much resident for the life of the process. So after
 * a call leaves the memory larger than RETAINED_MEMORY, the scanner is given a fresh instance once the call's
 * synchronous work is over (the old memory goes with the old instance, at the next collection). Views a
 * caller still holds keep reading the old memory, which stays valid for them.
 */
import { readFileSync } from 'node:fs';
import { KEYWORDS, keywordStarts } from './generic.js';
import { lacedCandidates, PREFIXES } from './laced.js';
import { foldCodePoint, normalise, type Normalised } from './normalise.js';
import { ANCHOR_GROUPS, type SecretPasses } from './secrets.js';
import { describe as describeSqueezed, type SqueezedMatcher } from './squeezed.js';
import type { IntentScorer, IntentScoring } from './intent.js';
import type { LexicalMatcher } from './lexical.js';
import { isWordUnit, type WordStream } from './words.js';

/** Where the committed module is: scanner/build beside src/ (or dist/) at the repository root. */
const MODULE_URL = new URL('../../scanner/build/scanner.wasm', import.meta.url);
/** Units of the fold buffer: the longest fold (NFKC of U+FDFA) is 18. A longer one falls back to TypeScript. */
const FOLD_UNITS = 64;
/**
 * From this many units on, a text is searched and normalised in the module: below it, the call and the
 * copies cost more than the work (per text, both searches: 0.26 against 0.79 µs at 16 units, 2.95 against
 * 2.15 µs at 256, 11.4 against 5.5 µs at 1,024).
 */
const IN_MODULE = 128;
/**
 * Past this many bytes of module memory after a call, the instance is replaced. A fresh instance and its
 * searches' setup cost about 1 ms of CPU, after a scan that cost 70 ms or more; a 100 KB call (5 MiB) never
 * pays for it.
 */
export const RETAINED_MEMORY = 8 * 2 ** 20;

// Node's WebAssembly global: the project's libraries (ES2023, no DOM) do not declare it.
interface WasmModule {
  readonly __wasmModule?: never;
}
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: unknown };
};

interface Exports {
  memory: { buffer: ArrayBuffer };
  input(units: number): number;
  fold_buffer(units: number): number;
  words_reset(squeeze: number): void;
  words_input(units: number): number;
  words_add_kept(units: number, source: number): void;
  squeezed_set(units: number): void;
  squeezed_match(): number;
  squeezed_hits(): number;
  lexicon_set(slot: number, units: number): void;
  lexicon_match(read: number): void;
  lexicon_hit_count(k: number): number;
  lexicon_hits(k: number): number;
  words_count(): number;
  words_column(column: number): number;
  normalise(units: number): number;
  normalised_column(column: number): number;
  keywords_set(units: number): void;
  keywords_starts(): number;
  laced_limits(count: number): number;
  laced_set(units: number): void;
  secret_search(units: number): number;
  laced_count(): number;
  laced_starts(): number;
  anchors_groups(count: number): number;
  anchors_set(units: number): void;
  anchors_count(): number;
  anchors_starts(): number;
  joins_quick(): number;
  joins_count(): number;
  joins_found(): number;
  html_ref(): number;
  ders_count(): number;
  ders_found(): number;
  encoded_runs(units: number, kinds: number): number;
  encoded_runs_found(): number;
  encoded_runs_masks(): number;
  scorer_room(slots: number, rows: number, classes: number): void;
  scorer_column(column: number): number;
  scorer_set(units: number): void;
  scorer_score(units: number): number;
  scorer_sums(): number;
  scorer_features(): number;
  aws_context(count: number): number;
  aws_secrets(units: number, count: number): number;
  aws_found(): number;
  ini_section(units: number): number;
  csv_hints(count: number): number;
  csv_lines(units: number, count: number): number;
  csv_lines_found(): number;
  joins_read(units: number): number;
}

const utf16 = new TextDecoder('utf-16le');

/** The compiled passes, over one instance of the module. */
export class CompiledScanner implements SecretPasses, IntentScoring {
  private readonly x: Exports;
  private readonly foldAt: number;
  private readonly module: WasmModule;
  private renewing = false;
  /**
   * The squeezed matcher whose tables and terms the module holds (one at a time: a process runs one rules
   * file, and another is handed over when it is used, as after a reload).
   */
  private squeezedLoaded: SqueezedMatcher | undefined = undefined;
  /** Likewise the term lists the module's two lexicon slots hold (0 the lexical detectors, 1 the intent topics). */
  private lexiconsLoaded: Array<LexicalMatcher | undefined> = [undefined, undefined];
  /** Likewise the intent word scorer whose model the module holds (scanner/src/scorer.rs). */
  private scorerLoaded: IntentScorer | undefined = undefined;
  /**
   * The text the module's input buffer holds (the last one `write` put there), so that a reading of the
   * text just searched (the AWS secret keys' windows and the INI section line, after `search`) does not
   * write it again.
   */
  private written: string | undefined = undefined;

  constructor(module: WasmModule) {
    this.module = module;
    const env = {
      word_class: (c: number) => (isWordUnit(c) ? 1 : 0),
      fold: (cp: number) => {
        const f = foldCodePoint(cp);
        if (f.length > FOLD_UNITS) return -1;
        const units = new Uint16Array(this.x.memory.buffer, this.foldAt, FOLD_UNITS);
        for (let k = 0; k < f.length; k++) units[k] = f.charCodeAt(k);
        return f.length;
      },
    };
    this.x = new WebAssembly.Instance(module, { env }).exports as Exports;
    this.foldAt = this.x.fold_buffer(FOLD_UNITS);
    // The module's search reads ASCII words only (all of them are).
    if (KEYWORDS.some((k) => !/^[\x21-\x7e][\x20-\x7e]*$/.test(k))) throw new Error('compiled scanner: a key-like word is not printable ASCII');
    const keywords = KEYWORDS.join('\u0000');
    this.write(keywords);
    this.x.keywords_set(keywords.length);
    if (PREFIXES.some(([x]) => !/^[\x21-\x7e]+$/.test(x))) throw new Error('compiled scanner: a laced prefix is not printable ASCII');
    const prefixes = PREFIXES.map(([x]) => x).join('\u0000');
    this.reserved(Uint32Array, PREFIXES.length, (n) => this.x.laced_limits(n)).set(PREFIXES.map(([, limit]) => limit));
    this.write(prefixes);
    this.x.laced_set(prefixes.length);
    const literals = ANCHOR_GROUPS.flatMap((ws, g) => ws.map((w) => [w, g] as const));
    if (literals.some(([w]) => !/^[\x21-\x7e]{2,}$/.test(w))) throw new Error('compiled scanner: an anchor is not printable ASCII of two units or more');
    this.reserved(Uint32Array, literals.length, (n) => this.x.anchors_groups(n)).set(literals.map(([, g]) => g));
    const anchors = literals.map(([w]) => w).join('\u0000');
    this.write(anchors);
    this.x.anchors_set(anchors.length);
  }

  /** The module's memory now, in bytes (it only grows; a fresh instance starts small again). */
  memoryBytes(): number {
    return this.x.memory.buffer.byteLength;
  }

  /**
   * After a call: when the memory has grown past RETAINED_MEMORY, this scanner takes a fresh instance once
   * the current synchronous work is done (never during a scan, whose later calls would grow it again).
   */
  private bound(): void {
    if (this.renewing || this.x.memory.buffer.byteLength <= RETAINED_MEMORY) return;
    this.renewing = true;
    setImmediate(() => {
      try {
        // Every field of a freshly built scanner (its instance, its buffers' offsets, whatever setup the
        // constructor does): its imports reach its own fields, which are these same values.
        Object.assign(this, new CompiledScanner(this.module));
      } catch {
        // No memory for a fresh instance: the grown one still works, and the next large call tries again.
      } finally {
        this.renewing = false;
      }
    });
  }

  /**
   * Writes `text`'s UTF-16 units (lone surrogates too, as they are) at `at`, by default the module's input
   * buffer. `at` is taken before the memory's buffer is read: reserving the room may grow the memory.
   */
  private write(text: string, at?: number): void {
    // Another buffer (the word stream's) leaves the input buffer's text as it was.
    if (at === undefined) this.written = text;
    at ??= this.x.input(text.length);
    Buffer.from(this.x.memory.buffer, at, text.length * 2).write(text, 0, 'utf16le');
  }

  /**
   * A view of `length` elements of room the module reserves (`reserve` returns where it starts). The view is
   * taken after the call, never before: reserving may grow the memory, which detaches a buffer read before
   * (the pathological tests' thousands of CSV hints did).
   */
  private reserved<View>(view: new (buffer: ArrayBuffer, at: number, length: number) => View, length: number, reserve: (length: number) => number): View {
    const at = reserve(length);
    return new view(this.x.memory.buffer, at, length);
  }

  /**
   * Makes the input buffer hold `text`: the text the secret pass has just searched is there already (the
   * module's readings after the search read it without writing it again); another is written whole.
   */
  private hold(text: string): void {
    if (this.written !== text) this.write(text);
  }

  /** Writes `units` (UTF-16 code units or small numbers) into the module's input buffer. */
  private writeUnits(units: ArrayLike<number>): void {
    this.written = undefined;
    this.reserved(Uint16Array, units.length, (n) => this.x.input(n)).set(units);
  }

  /**
   * The secret pass's searches (secrets.ts SecretPasses), compiled, in one reading of `text`: where the
   * key-like words start (generic.ts `keywordStarts`), the laced-key candidates (laced.ts
   * `lacedCandidates`), where the direct shapes' prefixes start (secrets.ts `anchorStarts`), the joins
   * (joins.ts `joinMatches`), whether it holds an HTML reference (decoders.ts `holdsHtmlRef`) and where a
   * headerless key body may start (private-key.ts `derStarts`); with `runs`
   * (encodings.ts `runKinds`), the encoded runs too (`runs` below), from the same copy of the text. Copies:
   * the module's memory is reused by the next call.
   */
  search(
    text: string,
    runs = 0,
  ): {
    keywordStarts: number[];
    lacedCandidates: ArrayLike<number>;
    anchors?: ArrayLike<number>;
    runs?: Int32Array;
    runMasks?: Int32Array;
    joins?: Int32Array | null;
    htmlRef?: boolean;
    ders?: Int32Array;
  } {
    // A short text (a decoded run, a few words around a boundary) costs less to read here than to hand over
    // (and its direct shapes are searched by their own expressions).
    if (text.length < IN_MODULE) return { keywordStarts: keywordStarts(text), lacedCandidates: lacedCandidates(text) };
    if (runs === 0) return this.searchInModule(text);
    // The encoded runs (`runs`) of the text just written, without writing it again.
    const searched = this.searchInModule(text);
    const count = this.x.encoded_runs(text.length, runs);
    const buffer = this.x.memory.buffer;
    return {
      ...searched,
      runs: new Int32Array(buffer, this.x.encoded_runs_found(), count).slice(),
      runMasks: new Int32Array(buffer, this.x.encoded_runs_masks(), count / 3).slice(),
    };
  }

  /** `search` in the module whatever the text's length (the equivalence test reads short texts with it too). */
  searchInModule(text: string): {
    keywordStarts: number[];
    lacedCandidates: Int32Array;
    anchors: Int32Array;
    joins: Int32Array | null;
    htmlRef: boolean;
    ders: Int32Array;
  } {
    const x = this.x;
    this.write(text);
    const keywords = x.secret_search(text.length);
    const buffer = x.memory.buffer;
    const found = {
      keywordStarts: Array.from(new Int32Array(buffer, x.keywords_starts(), keywords)),
      lacedCandidates: new Int32Array(buffer, x.laced_starts(), x.laced_count()).slice(),
      anchors: new Int32Array(buffer, x.anchors_starts(), x.anchors_count()).slice(),
      joins: x.joins_quick() ? new Int32Array(buffer, x.joins_found(), x.joins_count()).slice() : null,
      htmlRef: x.html_ref() === 1,
      ders: new Int32Array(buffer, x.ders_found(), x.ders_count()).slice(),
    };
    this.bound();
    return found;
  }

  /**
   * Where encodings.ts `scanRuns` finds base64, hex and base32 runs and hex byte lists in `text`: (kind,
   * start, end) each, for encodings.ts to decode; null for a short text (as for `search`: found there).
   */
  runs(text: string, base64: boolean, hex: boolean, base32: boolean): Int32Array | null {
    if (text.length < IN_MODULE) return null;
    return this.runsInModule(text, base64, hex, base32);
  }

  /** `runs` in the module whatever the text's length (the equivalence test reads short texts with it too). */
  runsInModule(text: string, base64: boolean, hex: boolean, base32: boolean): Int32Array {
    const x = this.x;
    this.write(text);
    const count = x.encoded_runs(text.length, (base64 ? 1 : 0) | (hex ? 2 : 0) | (base32 ? 4 : 0));
    return new Int32Array(x.memory.buffer, x.encoded_runs_found(), count).slice();
  }

  /** Which readings of each base64 run `runsInModule` finds are worth decoding (encodings.ts `base64Readings`; 0 for other runs). */
  runMasksInModule(text: string, base64: boolean, hex: boolean, base32: boolean): Int32Array {
    const x = this.x;
    this.write(text);
    const count = x.encoded_runs(text.length, (base64 ? 1 : 0) | (hex ? 2 : 0) | (base32 ? 4 : 0));
    return new Int32Array(x.memory.buffer, x.encoded_runs_masks(), count / 3).slice();
  }

  /**
   * Where the AWS secret keys start in the windows after `context` (credentials.ts CredentialPasses,
   * `awsSecretStarts`; scanner/src/aws.rs); null for a short text (read there, as for `search`).
   */
  awsSecrets(text: string, context: readonly number[]): Int32Array | null {
    if (text.length < IN_MODULE) return null;
    return this.awsSecretsInModule(text, context);
  }

  /** `awsSecrets` in the module whatever the text's length (the equivalence test reads short texts with it too). */
  awsSecretsInModule(text: string, context: readonly number[]): Int32Array {
    const x = this.x;
    const n = text.length;
    // The text the secret pass has just searched is still in the input buffer. Another (the boundary pass's
    // joined request, whose search is stitched from its texts' own) is written whole, once: its INI and CSV
    // readings just after and its joins (joinsInModule) read it there too.
    this.hold(text);
    const places = this.reserved(Uint32Array, context.length, (n) => x.aws_context(n));
    // A place past the text reads nothing, as it does there at the text's end.
    for (let k = 0; k < context.length; k++) places[k] = Math.min(context[k]!, n);
    const count = x.aws_secrets(n, context.length);
    const found = new Int32Array(x.memory.buffer, x.aws_found(), count).slice();
    this.bound();
    return found;
  }

  /**
   * Whether `text` holds an INI `[section]` line (credentials.ts CredentialPasses, `iniSection`;
   * scanner/src/ini.rs); null for a short text (read there, as for `search`). A text the input buffer does
   * not hold (the boundary pass's joined request, when no AWS window wrote it) is written: its joins are read
   * from the same buffer after (joinsInModule), so the write is made once either way.
   */
  iniSection(text: string): boolean | null {
    if (text.length < IN_MODULE) return null;
    return this.iniSectionInModule(text);
  }

  /** `iniSection` in the module whatever the text's length (the equivalence test reads short texts with it too). */
  iniSectionInModule(text: string): boolean {
    this.hold(text);
    const found = this.x.ini_section(text.length) === 1;
    this.bound();
    return found;
  }

  /**
   * The lines of `text` that hold `hints` (ascending), and whether each may be a CSV export's header
   * (credentials.ts CredentialPasses, `hintedLines` and `csvHeader`; scanner/src/csv.rs); null for a short
   * text; a text the input buffer does not hold is written, as for `iniSection`.
   */
  csvLines(text: string, hints: readonly number[]): { starts: number[]; headers: Int32Array } | null {
    if (text.length < IN_MODULE) return null;
    return this.csvLinesInModule(text, hints);
  }

  /** `csvLines` in the module whatever the text's length (the equivalence test reads short texts with it too). */
  csvLinesInModule(text: string, hints: readonly number[]): { starts: number[]; headers: Int32Array } {
    const x = this.x;
    this.hold(text);
    this.reserved(Uint32Array, hints.length, (n) => x.csv_hints(n)).set(hints);
    const count = x.csv_lines(text.length, hints.length);
    const found = new Int32Array(x.memory.buffer, x.csv_lines_found(), count);
    const starts: number[] = [];
    const headers = new Int32Array(count >> 1);
    for (let k = 0; k < count; k += 2) {
      starts.push(found[k]!);
      headers[k >> 1] = found[k + 1]!;
    }
    this.bound();
    return { starts, headers };
  }

  /**
   * joins.ts `joinMatches` of a text the search has not read (secrets.ts SecretPasses `joins`: the boundary
   * pass's joined request, whose search is stitched from its texts' own and carries no joins), read in the
   * module alone (scanner/src/joins.rs `read`); undefined for a short text (joins.ts reads it, as for
   * `search`).
   */
  joins(text: string): Int32Array | null | undefined {
    if (text.length < IN_MODULE) return undefined;
    return this.joinsInModule(text);
  }

  /** `joins` in the module whatever the text's length (the equivalence test reads short texts with it too). */
  joinsInModule(text: string): Int32Array | null {
    const x = this.x;
    this.hold(text);
    const count = x.joins_read(text.length);
    const found = count < 0 ? null : new Int32Array(x.memory.buffer, x.joins_found(), count).slice();
    this.bound();
    return found;
  }

  /** normalise.ts `normalise`, compiled for text that is not plain ASCII (and not short: as for `search`). */
  normalise(original: string): Normalised {
    if (original.length < IN_MODULE) return normalise(original);
    return this.normaliseInModule(original);
  }

  /** `normalise` in the module whatever the text's length (the equivalence test reads short texts with it too). */
  normaliseInModule(original: string): Normalised {
    // The module says whether the text is plain printable ASCII (-1: its own normal form) in the reading it
    // starts with: writing the text costs less than the expression's reading of it (0.01 against 0.07 ms
    // per 100,000 units), and text that is not plain ASCII is written anyway.
    this.write(original);
    const length = this.x.normalise(original.length);
    if (length === -1) return { original, text: original, starts: null, ends: null };
    // -2: a fold longer than the module's buffer (none is, in today's Unicode): the reference reads it.
    if (length < 0) return normalise(original);
    const buffer = this.x.memory.buffer;
    const text = utf16.decode(new Uint16Array(buffer, this.x.normalised_column(0), length));
    const starts = new Int32Array(buffer, this.x.normalised_column(1), length).slice();
    const ends = new Int32Array(buffer, this.x.normalised_column(2), length).slice();
    this.bound();
    return { original, text, starts, ends };
  }

  /**
   * lexical.ts `fillStream`, compiled: the words of `texts` (already normalised), in order, into the empty
   * `ws`; and in the same call what the matchers given read on those words, in the module: the term
   * lists' hits of `lexical` and `topics` (lexical.ts `hits`: tag, first word, last word; both in one pass
   * over the words) and the squeezed reading of `squeezed` (squeezed.ts `SqueezedMatcher.hits`: term, text;
   * read in the same walk over each text as its words, scanner/src/words.rs `add`). Each copied; undefined
   * for a matcher not given.
   *
   * Everything the module does for this call is done before `ws` takes views of its memory: a later call
   * that grew the memory would leave those views empty (the first request's words were lost so, when
   * handing over the squeezed tables grew it).
   */
  readWords(
    ws: WordStream,
    texts: ReadonlyArray<{ text: string }>,
    { lexical, topics, squeezed }: { lexical?: LexicalMatcher; topics?: LexicalMatcher; squeezed?: SqueezedMatcher },
  ): { lexical?: Int32Array; topics?: Int32Array; squeezed?: Int32Array } {
    const x = this.x;
    if (squeezed && squeezed.terms.length > 0 && this.squeezedLoaded !== squeezed) {
      const d = describeSqueezed(squeezed.terms);
      this.writeUnits(d);
      x.squeezed_set(d.length);
      this.squeezedLoaded = squeezed;
    }
    [lexical, topics].forEach((m, slot) => {
      if (m && this.lexiconsLoaded[slot] !== m) this.loadLexicon(slot, m);
    });
    x.words_reset(squeezed && squeezed.terms.length > 0 ? 1 : 0);
    const sources: string[] = [];
    texts.forEach((t, i) => {
      const lower = t.text.toLowerCase();
      sources.push(lower);
      this.write(lower, x.words_input(lower.length));
      x.words_add_kept(lower.length, i);
    });
    const out: { lexical?: Int32Array; topics?: Int32Array; squeezed?: Int32Array } = {};
    if (squeezed && squeezed.terms.length === 0) out.squeezed = new Int32Array(0);
    else if (squeezed) {
      const found = x.squeezed_match(); // the hits of the walks just made
      out.squeezed = new Int32Array(x.memory.buffer, x.squeezed_hits(), found).slice();
    }
    if (lexical || topics) {
      x.lexicon_match((lexical ? 1 : 0) | (topics ? 2 : 0)); // may grow the memory too
      const hits = (k: number) => new Int32Array(x.memory.buffer, x.lexicon_hits(k), x.lexicon_hit_count(k) * 3).slice();
      if (lexical) out.lexical = hits(0);
      if (topics) out.topics = hits(1);
    }
    const count = x.words_count();
    const buffer = x.memory.buffer;
    const i32 = (column: number) => new Int32Array(buffer, x.words_column(column), count);
    ws.adopt(sources, count, {
      hash: i32(0),
      prefix: i32(1),
      length: i32(2),
      text: i32(3),
      start: i32(4),
      end: i32(5),
      flags: new Uint8Array(buffer, x.words_column(6), count),
    });
    this.bound();
    return out;
  }

  /**
   * intent.ts `IntentScorer.score(intentWords(text))`, compiled: the module cuts and folds the words of
   * `text`, hashes their features and sums the model's rows (scanner/src/scorer.rs); the softmax is the
   * scorer's own (`probabilities`), so both engines take the same `Math.exp`.
   */
  intentScore(scorer: IntentScorer, text: string): Float64Array {
    return scorer.probabilities(this.intentSums(scorer, text).sums);
  }

  /**
   * The class sums of `text` (before the softmax) and how many distinct features it has; `features()`
   * then gives them in the order first met (the equivalence test compares both with intent.ts).
   */
  intentSums(scorer: IntentScorer, text: string): { sums: Float64Array; features: number } {
    const x = this.x;
    if (this.scorerLoaded !== scorer) this.loadScorer(scorer);
    // As intentWords reads a text: WordStream.add lower-cases it (Unicode's mapping, so here).
    const lower = text.toLowerCase();
    this.write(lower);
    const features = x.scorer_score(lower.length);
    if (features < 0) throw new Error('compiled scanner: no intent model loaded');
    const sums = new Float64Array(x.memory.buffer, x.scorer_sums(), scorer.classes.length).slice();
    this.bound();
    return { sums, features };
  }

  /** The distinct features of the text `intentSums` last scored, in the order first met. */
  intentFeatures(count: number): Float64Array {
    return Float64Array.from(new BigUint64Array(this.x.memory.buffer, this.x.scorer_features(), count), Number);
  }

  /** Hands `scorer`'s model to the module: its tables as built (the same hashes and rows) and its concepts. */
  private loadScorer(scorer: IntentScorer): void {
    const x = this.x;
    const { keys, rowOf, table, bias } = scorer.tables();
    const k = bias.length;
    const units: number[] = [];
    const { words, prefixes } = scorer.concepts.lists();
    for (const list of [words, prefixes]) {
      if (list.size > 0xffff) throw new Error('compiled scanner: a concept list too large for the module');
      units.push(list.size);
      for (const [w, c] of list) {
        if (w.length > 0xffff || c.length > 0xffff) throw new Error('compiled scanner: a concept too long for the module');
        units.push(w.length);
        for (let i = 0; i < w.length; i++) units.push(w.charCodeAt(i));
        units.push(c.length);
        for (let i = 0; i < c.length; i++) units.push(c.charCodeAt(i));
      }
    }
    x.scorer_room(keys.length, table.length / k, k);
    // Each view taken after the room is made (making it may grow the memory).
    new Float64Array(x.memory.buffer, x.scorer_column(0), keys.length).set(keys);
    new Int32Array(x.memory.buffer, x.scorer_column(1), rowOf.length).set(rowOf);
    new Float64Array(x.memory.buffer, x.scorer_column(2), table.length).set(table);
    new Float64Array(x.memory.buffer, x.scorer_column(3), k).set(bias);
    this.writeUnits(units);
    x.scorer_set(units.length);
    this.scorerLoaded = scorer;
  }

  /** Hands `matcher`'s terms (lexical.ts `terms`) to lexicon slot `slot`, as lexicon.rs `from_terms` reads them. */
  private loadLexicon(slot: number, matcher: LexicalMatcher): void {
    const units: number[] = [];
    for (const { words, prefixLast, tag } of matcher.terms) {
      if (tag > 0xffff || words.length > 0xffff || words.some((w) => w.length > 0xffff))
        throw new Error('compiled scanner: a term list too large for the module');
      units.push(words.length, prefixLast ? 1 : 0, tag);
      for (const w of words) {
        units.push(w.length);
        for (let k = 0; k < w.length; k++) units.push(w.charCodeAt(k));
      }
    }
    this.writeUnits(units);
    this.x.lexicon_set(slot, units.length);
    this.lexiconsLoaded[slot] = matcher;
  }
}

let shared: CompiledScanner | undefined;

/** The process's compiled scanner (the module is read and instantiated on first use). */
export function compiledScanner(): CompiledScanner {
  shared ??= new CompiledScanner(new WebAssembly.Module(readFileSync(MODULE_URL)));
  return shared;
}
