//! The guardrail scanner's per-character work, for src/guard/compiled.ts: a small hand ABI over one linear
//! memory, no bindings runtime. TypeScript writes a text's UTF-16 units into the input buffer (`input`),
//! calls a pass, and reads the results as typed-array views of this module's memory: offsets and ids, never
//! strings. The TypeScript scanner (src/guard/) is the reference; every pass here reproduces one of its
//! functions unit for unit, and test/guard/scanner-equivalence.test.ts holds the two to identical findings.
//!
//! One instance serves one compiled guardrails runtime, synchronously: its state is a single global.
//!
//! Passes:
//!  - words.rs: the word stream of src/guard/words.ts (`WordStream.add`): word offsets, folded hashes,
//!    leetspeak and spelled-out letters.
//!  - normalise.rs: the canonical form of src/guard/normalise.ts, with the map back to the original.
//!  - keywords.rs: where the key-like words start (src/guard/generic.ts `keywordStarts`).
//!  - laced.rs: where a secret laced with separators may start (src/guard/laced.ts `findLaced`'s candidates).
//!  - anchors.rs: where the direct secret shapes' literal prefixes start (src/guard/secrets.ts `anchorStarts`).
//!  - joins.rs: where a key split by concatenation, interpolation or a line continuation may be joined
//!    (src/guard/joins.ts `joinMatches`), in the same reading as the three searches above.
//!  - refs.rs: whether a text holds an HTML character reference (src/guard/decoders.ts `holdsHtmlRef`), in
//!    that reading too.
//!  - ders.rs: where a private key body without its header may start (src/guard/private-key.ts
//!    `derStarts`), in that reading too.
//!  - lexicon.rs: the lexical detectors' and the intent topics' term lists matched on the word stream
//!    (src/guard/lexical.ts `LexicalMatcher` `hits`), both in one pass over the words.
//!  - squeezed.rs: the block rules' explicit terms read squeezed (src/guard/squeezed.ts
//!    `SqueezedMatcher`) in the texts of the word stream, as (term, text) hits, in the same walk of each
//!    text as its words (words.rs `add` steps squeezed.rs `Walk`).
//!  - scorer.rs: the intent word scorer of src/guard/intent.ts (`IntentScorer.score`): a text's words cut
//!    as words.rs cuts them, read plain and as concepts, their features hashed and counted once, the
//!    model's rows summed; the class sums go back (the softmax stays in TypeScript).
//!  - runs.rs: where base64, base32 and hex runs and hex byte lists may be (src/guard/encodings.ts
//!    `scanRuns`), each as (kind, start, end), for TypeScript to decode; and, for each base64 run, which of
//!    its four alignments (of a hex run, its two) decode to bytes TypeScript keeps (decodable.rs), so that
//!    it decodes only those.
//!  - aws.rs: the AWS secret access keys in the windows after the places that name AWS
//!    (src/guard/credentials.ts `findAwsSecrets`), as offsets where each starts.
//!  - ini.rs: whether a text holds an INI `[section]` line (src/guard/credentials.ts `findIniExports`).
//!  - csv.rs: the lines holding a credential's name, and whether each may be a CSV export's header
//!    (src/guard/credentials.ts `hintedLines`, `csvHeader`).

mod anchors;
mod aws;
mod csv;
mod decodable;
mod ders;
mod ini;
mod joins;
mod keywords;
mod laced;
mod lexicon;
mod normalise;
mod refs;
mod runs;
mod scorer;
mod search;
mod squeezed;
mod units;
mod words;

// What the host (TypeScript) decides for this module, so that both scanners read characters alike.
#[link(wasm_import_module = "env")]
extern "C" {
    // Is the BMP code unit `c` (non-ASCII, not a surrogate) a letter or digit (words.ts isWordUnit)?
    fn word_class(c: u32) -> u32;
    // Writes the folded form of non-ASCII code point `cp` (normalise.ts foldCodePoint) into the fold
    // buffer (`fold_buffer`) and returns its length in UTF-16 units.
    fn fold(cp: u32) -> u32;
}

pub(crate) struct State {
    input: Vec<u16>,
    words: words::Words,
    keywords: keywords::Keywords,
    laced: laced::Laced,
    laced_limits: Vec<u32>,
    anchors: anchors::Anchors,
    anchor_groups: Vec<u32>,
    joins: joins::Joins,
    /// Did the last search's text hold an HTML character reference (refs.rs)?
    html_ref: bool,
    ders: ders::Ders,
    norm: normalise::Normalised,
    /// Per BMP code unit: 0 not asked yet, 1 word character, 2 not.
    word_class: Vec<u8>,
    folds: normalise::FoldCache,
    fold_buffer: Vec<u16>,
    /// The texts of the word stream (as `words_add_kept` read them, one after another) and where each
    /// starts: the squeezed reading reads them after the words are cut, without another copy.
    word_texts: Vec<u16>,
    word_bases: Vec<usize>,
    squeezed: squeezed::Squeezed,
    /// Does the word stream's walk read the squeezed terms too (`words_reset`), and where that walk is.
    squeeze: bool,
    walk: squeezed::Walk,
    /// The term lists `lexicon_set` took, by slot (0 the lexical detectors, 1 the intent topics), and the
    /// last `lexicon_match`'s hits.
    lexicons: [Option<lexicon::Lexicon>; 2],
    lexicon_hits: [Vec<i32>; 2],
    /// Per pair of units (search.rs): does a key-like word or an anchor literal start with them?
    pair_flags: Box<[u8; search::TABLE]>,
    /// The intent word scorer's model and its last text's sums (scorer.rs).
    scorer: scorer::Scorer,
}

static mut STATE: Option<State> = None;

pub(crate) fn state() -> &'static mut State {
    // SAFETY: wasm32-unknown-unknown runs one thread, and the host never re-enters an export while another
    // runs (the imports do not call back into the module).
    unsafe {
        let s = &mut *core::ptr::addr_of_mut!(STATE);
        s.get_or_insert_with(|| State {
            input: Vec::new(),
            words: words::Words::default(),
            keywords: keywords::Keywords::default(),
            laced: laced::Laced::default(),
            laced_limits: Vec::new(),
            anchors: anchors::Anchors::default(),
            anchor_groups: Vec::new(),
            joins: joins::Joins::default(),
            html_ref: false,
            ders: ders::Ders::default(),
            norm: normalise::Normalised::default(),
            word_class: vec![0; 65536],
            folds: normalise::FoldCache::default(),
            fold_buffer: vec![0; 64],
            word_texts: Vec::new(),
            word_bases: Vec::new(),
            squeezed: squeezed::Squeezed::default(),
            squeeze: false,
            walk: squeezed::Walk::default(),
            lexicons: [None, None],
            lexicon_hits: [Vec::new(), Vec::new()],
            pair_flags: search::empty_pairs(),
            scorer: scorer::Scorer::default(),
        })
    }
}

impl State {
    pub(crate) fn is_word_unit(&mut self, c: u16) -> bool {
        if c < 0x80 {
            return (0x61..=0x7a).contains(&c) || (0x30..=0x39).contains(&c);
        }
        if (0xd800..=0xdfff).contains(&c) {
            return false; // astral characters (emoji, symbols) separate words
        }
        let mut k = self.word_class[c as usize];
        if k == 0 {
            // SAFETY: a plain host function of one number.
            k = if unsafe { word_class(c as u32) } != 0 {
                1
            } else {
                2
            };
            self.word_class[c as usize] = k;
        }
        k == 1
    }
}

/// Grows `buffer` to at least `units` units (never shrinks it) and returns where the host writes them.
fn room(buffer: &mut Vec<u16>, units: u32) -> *mut u16 {
    if buffer.len() < units as usize {
        buffer.resize(units as usize, 0);
    }
    buffer.as_mut_ptr()
}

/// Room for `units` UTF-16 units of input; returns where the host writes them.
#[no_mangle]
pub extern "C" fn input(units: u32) -> *mut u16 {
    room(&mut state().input, units)
}

/// Where the host writes a fold (at most `units` units; grown on request).
#[no_mangle]
pub extern "C" fn fold_buffer(units: u32) -> *mut u16 {
    room(&mut state().fold_buffer, units)
}

/// Forgets every word (the next `words_add_kept` is text 0); with `squeeze` 1, the texts' walk reads the
/// squeezed terms (`squeezed_set`) too, for `squeezed_match`.
#[no_mangle]
pub extern "C" fn words_reset(squeeze: u32) {
    let s = state();
    s.words.reset();
    s.word_texts.clear();
    s.word_bases.clear();
    s.squeeze = squeeze != 0 && s.squeezed.active();
    s.squeezed.clear_hits();
}

/// Room for the next text of the word stream, `units` units, kept after `words_add_kept` for the squeezed
/// reading; returns where the host writes them.
#[no_mangle]
pub extern "C" fn words_input(units: u32) -> *mut u16 {
    let s = state();
    let at = s.word_texts.len();
    s.word_texts.resize(at + units as usize, 0);
    // SAFETY: `at` is within the buffer just grown.
    unsafe { s.word_texts.as_mut_ptr().add(at) }
}

/// Adds the words of the text just written at `words_input` (its last `units` units: already normalised and
/// lowercased) as text number `source`, and, after `words_reset(1)`, the squeezed terms' hits in it, in the
/// same walk; the text stays.
#[no_mangle]
pub extern "C" fn words_add_kept(units: u32, source: u32) {
    let s = state();
    let texts = core::mem::take(&mut s.word_texts);
    let at = texts.len() - units as usize;
    s.word_bases.resize(source as usize, at);
    s.word_bases.push(at);
    let mut q = core::mem::take(&mut s.squeezed);
    let mut walk = core::mem::take(&mut s.walk);
    if s.squeeze {
        walk.begin(&q);
        words::add::<true>(s, &texts[at..], source as i32, &q, &mut walk);
        walk.finish(&mut q, source as i32);
    } else {
        words::add::<false>(s, &texts[at..], source as i32, &q, &mut walk);
    }
    s.walk = walk;
    s.squeezed = q;
    s.word_texts = texts;
}

/// Takes the squeezed reading's tables and terms (the first `units` units of the input, as squeezed.rs
/// `set` reads them).
#[no_mangle]
pub extern "C" fn squeezed_set(units: u32) {
    let s = state();
    let text = core::mem::take(&mut s.input);
    s.squeezed.set(&text[..units as usize]);
    s.input = text;
}

/// How many numbers `squeezed_hits` holds (two per hit: term, text): the squeezed terms' hits in the texts
/// added since `words_reset(1)`, by text (none after `words_reset(0)`).
#[no_mangle]
pub extern "C" fn squeezed_match() -> u32 {
    state().squeezed.hits.len() as u32
}

/// Takes the term list of slot `slot` (0 or 1; the first `units` units of the input, as lexicon.rs
/// `from_terms` reads them), replacing the one it held.
#[no_mangle]
pub extern "C" fn lexicon_set(slot: u32, units: u32) {
    let s = state();
    let lx = lexicon::Lexicon::from_terms(&s.input[..units as usize]);
    s.lexicons[slot as usize & 1] = Some(lx);
}

/// Matches the term lists of the slots `read` names (bit 0 slot 0, bit 1 slot 1) on the word stream, in
/// one pass; slot k's hits are `lexicon_hits(k)`, `lexicon_hit_count(k)` triples (tag, first word, last
/// word).
#[no_mangle]
pub extern "C" fn lexicon_match(read: u32) {
    let s = state();
    let lexicons = core::mem::take(&mut s.lexicons);
    let mut outs = core::mem::take(&mut s.lexicon_hits);
    lexicon::run(s, &lexicons, read, &mut outs);
    s.lexicons = lexicons;
    s.lexicon_hits = outs;
}

#[no_mangle]
pub extern "C" fn lexicon_hit_count(k: u32) -> u32 {
    (state().lexicon_hits[k as usize & 1].len() / 3) as u32
}

#[no_mangle]
pub extern "C" fn lexicon_hits(k: u32) -> *const i32 {
    state().lexicon_hits[k as usize & 1].as_ptr()
}

#[no_mangle]
pub extern "C" fn squeezed_hits() -> *const i32 {
    state().squeezed.hits.as_ptr()
}

#[no_mangle]
pub extern "C" fn words_count() -> u32 {
    state().words.count() as u32
}

/// The address of one column of the word stream: 0 hash, 1 prefix, 2 length, 3 text, 4 start, 5 end
/// (i32 each), 6 flags (u8).
#[no_mangle]
pub extern "C" fn words_column(column: u32) -> *const u8 {
    state().words.column(column)
}

/// Normalises the first `units` units of the input; returns the length of the normalised text, or -1 when
/// the text is plain printable ASCII (it is its own normal form: no text, no maps).
#[no_mangle]
pub extern "C" fn normalise(units: u32) -> i32 {
    let s = state();
    let text = core::mem::take(&mut s.input);
    let n = normalise::run(s, &text[..units as usize]);
    s.input = text;
    n
}

/// The address of one column of the last normalisation: 0 units (u16), 1 starts, 2 ends (i32).
#[no_mangle]
pub extern "C" fn normalised_column(column: u32) -> *const u8 {
    state().norm.column(column)
}

/// Takes the key-like words (the first `units` units of the input: the words, NUL-separated).
#[no_mangle]
pub extern "C" fn keywords_set(units: u32) {
    let s = state();
    let text = core::mem::take(&mut s.input);
    s.keywords.set(&text[..units as usize]);
    s.input = text;
    search::rebuild(s);
}

#[no_mangle]
pub extern "C" fn keywords_starts() -> *const u8 {
    state().keywords.starts()
}

/// Room for `count` joined lengths, one per laced prefix, in the order `laced_set` reads the prefixes.
#[no_mangle]
pub extern "C" fn laced_limits(count: u32) -> *mut u32 {
    let s = state();
    s.laced_limits.resize(count as usize, 0);
    s.laced_limits.as_mut_ptr()
}

/// Takes the laced prefixes (the first `units` units of the input: NUL-separated) and their joined lengths.
#[no_mangle]
pub extern "C" fn laced_set(units: u32) {
    let s = state();
    s.laced.set(&s.input[..units as usize], &s.laced_limits);
}

#[no_mangle]
pub extern "C" fn laced_starts() -> *const u8 {
    state().laced.starts()
}

/// The searches of the secret pass over the first `units` units of the input, written once: where the
/// key-like words start (`keywords_starts`, returned count), the laced candidates (`laced_count`,
/// `laced_starts`), the direct shapes' anchors (`anchors_count`, `anchors_starts`), the joins
/// (`joins_quick`, `joins_count`, `joins_found`), whether it holds an HTML reference (`html_ref`) and where
/// a headerless key body may start (`ders_count`, `ders_found`).
#[no_mangle]
pub extern "C" fn secret_search(units: u32) -> u32 {
    let s = state();
    search::run(s, units as usize);
    s.keywords.count() as u32
}

/// Did the last search's text hold an HTML character reference (1) or not (0)?
#[no_mangle]
pub extern "C" fn html_ref() -> u32 {
    u32::from(state().html_ref)
}

/// How many offsets `ders_found` holds: where private-key.ts `DER_START` matches in the last search's text.
#[no_mangle]
pub extern "C" fn ders_count() -> u32 {
    state().ders.count() as u32
}

#[no_mangle]
pub extern "C" fn ders_found() -> *const i32 {
    state().ders.found()
}

/// Did joins.ts `QUICK` match anywhere in the last search's text (1) or not (0)?
#[no_mangle]
pub extern "C" fn joins_quick() -> u32 {
    u32::from(state().joins.quick())
}

/// How many numbers `joins_found` holds: (start, end) of each match of joins.ts `JOIN`.
#[no_mangle]
pub extern "C" fn joins_count() -> u32 {
    state().joins.count() as u32
}

#[no_mangle]
pub extern "C" fn joins_found() -> *const i32 {
    state().joins.found()
}

#[no_mangle]
pub extern "C" fn laced_count() -> u32 {
    state().laced.count() as u32
}

/// Room for `count` group numbers, one per anchor literal, in the order `anchors_set` reads the literals.
#[no_mangle]
pub extern "C" fn anchors_groups(count: u32) -> *mut u32 {
    let s = state();
    s.anchor_groups.resize(count as usize, 0);
    s.anchor_groups.as_mut_ptr()
}

/// Takes the anchor literals (the first `units` units of the input: NUL-separated) and their groups.
#[no_mangle]
pub extern "C" fn anchors_set(units: u32) {
    let s = state();
    s.anchors.set(&s.input[..units as usize], &s.anchor_groups);
    search::rebuild(s);
}

#[no_mangle]
pub extern "C" fn anchors_count() -> u32 {
    state().anchors.count() as u32
}

#[no_mangle]
pub extern "C" fn anchors_starts() -> *const u8 {
    state().anchors.starts()
}

/// Room for an intent scorer's model (scorer.rs): `slots` slots of its feature table, `rows` rows of
/// `classes` weights; the host then writes `scorer_column` 0 to 3 and calls `scorer_set`.
#[no_mangle]
pub extern "C" fn scorer_room(slots: u32, rows: u32, classes: u32) {
    state()
        .scorer
        .room(slots as usize, rows as usize, classes as usize);
}

/// Where the host writes the model's tables: 0 the feature hash of each slot (f64), 1 its row + 1 (i32,
/// 0 empty), 2 the rows (f64), 3 the bias (f64).
#[no_mangle]
pub extern "C" fn scorer_column(column: u32) -> *mut u8 {
    let sc = &mut state().scorer;
    match column {
        0 => sc.keys_in.as_mut_ptr() as *mut u8,
        1 => sc.row_of.as_mut_ptr() as *mut u8,
        2 => sc.table.as_mut_ptr() as *mut u8,
        _ => sc.bias.as_mut_ptr() as *mut u8,
    }
}

/// Takes the tables just written and the model's concept lists (the first `units` units of the input, as
/// scorer.rs `Scorer::set` reads them).
#[no_mangle]
pub extern "C" fn scorer_set(units: u32) {
    let s = state();
    let text = core::mem::take(&mut s.input);
    s.scorer.set(&text[..units as usize]);
    s.input = text;
}

/// Scores the first `units` units of the input (normalised, lowercased) with the model `scorer_set` took:
/// the class sums at `scorer_sums`; returns how many distinct features the text has (`scorer_features`,
/// in the order first met). -1 when no model is loaded.
#[no_mangle]
pub extern "C" fn scorer_score(units: u32) -> i32 {
    let s = state();
    if !s.scorer.loaded() {
        return -1;
    }
    let text = core::mem::take(&mut s.input);
    let n = scorer::score(s, &text[..units as usize]);
    s.input = text;
    n as i32
}

#[no_mangle]
pub extern "C" fn scorer_sums() -> *const f64 {
    state().scorer.sums.as_ptr()
}

#[no_mangle]
pub extern "C" fn scorer_features() -> *const u64 {
    scorer::features(state())
}

/// The encoded runs' finds (runs.rs), kept apart from `State`: (kind, start, end) each.
static mut RUNS: Vec<i32> = Vec::new();

/// Finds the encoded runs in the first `units` units of the input (`kinds`: 1 base64, 2 hex, 4 base32);
/// returns how many numbers `encoded_runs_found` holds (three per run).
#[no_mangle]
pub extern "C" fn encoded_runs(units: u32, kinds: u32) -> u32 {
    let o = runs::Options {
        base64: kinds & 1 != 0,
        hex: kinds & 2 != 0,
        base32: kinds & 4 != 0,
    };
    // SAFETY: one thread, no re-entry (see `state`).
    let out = unsafe { &mut *core::ptr::addr_of_mut!(RUNS) };
    let text = &state().input[..units as usize];
    runs::run(text, &o, out);
    // SAFETY: as above.
    let masks = unsafe { &mut *core::ptr::addr_of_mut!(RUN_MASKS) };
    let scratch = unsafe { &mut *core::ptr::addr_of_mut!(RUN_BYTES) };
    masks.clear();
    for run in out.chunks_exact(3) {
        let units = &text[run[1] as usize..run[2] as usize];
        let mask = match run[0] {
            BASE64_RUN => decodable::base64_mask(units, scratch),
            HEX_RUN => decodable::hex_mask(units),
            _ => -1,
        };
        masks.push(mask);
    }
    out.len() as u32
}

/// encodings.ts HEX_RUN and BASE64_RUN.
const HEX_RUN: i32 = 0;
const BASE64_RUN: i32 = 3;
/// One number per run of `encoded_runs_found`: for a base64 or hex run, which of its readings encodings.ts
/// keeps (decodable.rs `base64_mask`, `hex_mask`); -1 (all) for the others. And the sextets of a base64 run.
static mut RUN_MASKS: Vec<i32> = Vec::new();
static mut RUN_BYTES: Vec<u8> = Vec::new();

#[no_mangle]
pub extern "C" fn encoded_runs_masks() -> *const i32 {
    // SAFETY: as in `encoded_runs`.
    unsafe { (*core::ptr::addr_of!(RUN_MASKS)).as_ptr() }
}

#[no_mangle]
pub extern "C" fn encoded_runs_found() -> *const i32 {
    // SAFETY: as in `encoded_runs`.
    unsafe { (*core::ptr::addr_of!(RUNS)).as_ptr() }
}

/// The AWS secret keys' places (aws.rs): where the host writes them, and where each key found starts.
static mut AWS_CONTEXT: Vec<u32> = Vec::new();
static mut AWS_FOUND: Vec<i32> = Vec::new();

/// Room for `count` places that name AWS; returns where the host writes them (ascending).
#[no_mangle]
pub extern "C" fn aws_context(count: u32) -> *mut u32 {
    // SAFETY: one thread, no re-entry (see `state`).
    let context = unsafe { &mut *core::ptr::addr_of_mut!(AWS_CONTEXT) };
    context.resize(count as usize, 0);
    context.as_mut_ptr()
}

/// Finds the AWS secret keys in the first `units` units of the input after the first `count` places of
/// `aws_context`; returns how many starts `aws_found` holds.
#[no_mangle]
pub extern "C" fn aws_secrets(units: u32, count: u32) -> u32 {
    // SAFETY: as in `aws_context`.
    let (context, out) = unsafe {
        (
            &*core::ptr::addr_of!(AWS_CONTEXT),
            &mut *core::ptr::addr_of_mut!(AWS_FOUND),
        )
    };
    aws::secrets(
        &state().input[..units as usize],
        &context[..count as usize],
        out,
    );
    out.len() as u32
}

#[no_mangle]
pub extern "C" fn aws_found() -> *const i32 {
    // SAFETY: as in `aws_context`.
    unsafe { (*core::ptr::addr_of!(AWS_FOUND)).as_ptr() }
}

/// Whether the first `units` units of the input hold an INI `[section]` line (ini.rs): 1 or 0.
#[no_mangle]
pub extern "C" fn ini_section(units: u32) -> u32 {
    u32::from(ini::section(&state().input[..units as usize]))
}

/// The hinted lines' places (csv.rs): where the host writes the hints, and the lines found.
static mut CSV_HINTS: Vec<u32> = Vec::new();
static mut CSV_LINES: Vec<i32> = Vec::new();

/// Room for `count` hints (ascending offsets); returns where the host writes them.
#[no_mangle]
pub extern "C" fn csv_hints(count: u32) -> *mut u32 {
    // SAFETY: one thread, no re-entry (see `state`).
    let hints = unsafe { &mut *core::ptr::addr_of_mut!(CSV_HINTS) };
    hints.resize(count as usize, 0);
    hints.as_mut_ptr()
}

/// The lines of the first `units` units of the input that hold the first `count` hints of `csv_hints`;
/// returns how many units `csv_lines_found` holds: (line start, whether it may be a CSV header) each.
#[no_mangle]
pub extern "C" fn csv_lines(units: u32, count: u32) -> u32 {
    // SAFETY: as in `csv_hints`.
    let (hints, out) = unsafe {
        (
            &*core::ptr::addr_of!(CSV_HINTS),
            &mut *core::ptr::addr_of_mut!(CSV_LINES),
        )
    };
    csv::lines(&state().input[..units as usize], &hints[..count as usize], out);
    out.len() as u32
}

#[no_mangle]
pub extern "C" fn csv_lines_found() -> *const i32 {
    // SAFETY: as in `csv_hints`.
    unsafe { (*core::ptr::addr_of!(CSV_LINES)).as_ptr() }
}

/// The joins (joins.rs) of the first `units` units of the input, read alone (not in the search's walk):
/// returns how many units `joins_found` holds, or -1 when `QUICK` matches nowhere (no join is read).
#[no_mangle]
pub extern "C" fn joins_read(units: u32) -> i32 {
    let s = state();
    search::joins_only(s, units as usize);
    if s.joins.quick() {
        s.joins.count() as i32
    } else {
        -1
    }
}
