//! The secret pass's searches in one reading of a text: at every offset, whether a key-like word starts
//! there (keywords.rs), whether a laced key may (laced.rs, only at token starts whose unit is `A` or a
//! lower-case letter that starts one of its prefixes), and whether a direct shape's literal
//! prefix does (anchors.rs), where a key split by the syntax around it may be joined (joins.rs), and
//! whether the text holds an HTML character reference (refs.rs), and where a key body without its header
//! may start (ders.rs). The words and the literals are looked up by the offset's first two units, so
//! an offset where none starts costs one empty list each.
//!
//! The walk reads sixteen offsets at a look (`flagged16`) and looks at one table: one byte per pair of
//! units (does a key-like word start with those two; does an anchor literal; may a laced key start there if
//! a token does). The table is built from the keywords' and the anchors' lists when either is handed over
//! (`rebuild`). The sixteen pairs' places in it are computed with WebAssembly's 128-bit instructions and read
//! without a branch, so an offset where nothing starts (about fourteen in fifteen of prose) costs a few
//! instructions, and only the others are checked (`check`, with the flags found for them, not read again);
//! a word whose first two letters start no laced prefix (`should`, `after`) is not looked at for one.

use crate::State;

/// Per pair: a key-like word starts with it; an anchor literal does.
const KEYWORD: u8 = 1;
const ANCHOR: u8 = 2;
/// Per pair: a laced key may start at its first unit, if that unit starts a token (laced.rs `anchor_at`:
/// the first unit is `A` or one of `a`, `g`, `h`, `n`, `r`, `s`, `x`, and the second is one the expression
/// allows after it or no ASCII letter or digit, since every separator it reads across is none).
const LACED: u8 = 4;
/// Per pair: a key joined by the syntax around it may be read from its first unit (a quote, backtick, `$`,
/// `\` or `^`, followed by a unit some join or the quick look reads next: joins.rs).
const JOIN: u8 = 8;
/// Per pair: an HTML character reference may start here (`&`, then `#` or an ASCII letter: refs.rs).
const REF: u8 = 16;
/// Per pair: a headerless key body may start here (`M` then `A` to `I`, or `b3`: ders.rs).
const DER: u8 = 32;
/// Entries of the key-like words' and the anchors' lists: 128 first units, each with 129 second ones (128:
/// not ASCII, or the end).
pub(crate) const PAIRS: usize = 128 * 129;
/// Entries of the pair table the walk reads: 129 first units (128: not ASCII), each with 129 second ones, so
/// every offset is one look whatever its units.
pub(crate) const TABLE: usize = 129 * 129;

/// What a laced key's anchor allows after its first unit `c`, when that second unit is an ASCII letter or
/// digit (laced.rs `anchor_at`; `a` starts only a lower-case AWS prefix written whole). None: `c` starts no
/// laced key.
fn laced_second(c: usize) -> Option<&'static [u8]> {
    match c {
        0x73 | 0x72 => Some(b"k"),
        0x67 => Some(b"hli"),
        0x6e => Some(b"p"),
        0x78 => Some(b"o"),
        0x68 => Some(b"f"),
        0x41 => Some(b"IKSBCGNPR"),
        0x61 => Some(b"ksbcginpr"),
        _ => None,
    }
}

/// The laced, join, reference and key-body bits of the pair (c, d).
fn unit_flags(c: usize, d: usize) -> u8 {
    let alnum = |u: usize| matches!(u, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a);
    let laced = laced_second(c).is_some_and(|second| !alnum(d) || second.contains(&(d as u8)));
    // What may follow a unit that starts a join or the quick look (joins.rs): after a quote, a space or tab,
    // a line break, a `\` before one, an operator's first unit, `)` or `}` (and `-` for the quick look); `{`
    // after `$`; a line break after `\` or `^`.
    let join = match c {
        0x22 | 0x27 | 0x60 => matches!(
            d,
            0x20 | 0x09
                | 0x0d
                | 0x0a
                | 0x2b
                | 0x2e
                | 0x7c
                | 0x26
                | 0x3c
                | 0x7e
                | 0x29
                | 0x7d
                | 0x2d
                | 0x5c
        ),
        0x24 => d == 0x7b,
        0x5c | 0x5e => d == 0x0d || d == 0x0a,
        _ => false,
    };
    let reference = c == 0x26 && (d == 0x23 || (0x61..=0x7a).contains(&(d | 0x20)));
    let der = (c == 0x4d && (0x41..=0x49).contains(&d)) || (c == 0x62 && d == 0x33);
    (if laced { LACED } else { 0 })
        | (if join { JOIN } else { 0 })
        | (if reference { REF } else { 0 })
        | (if der { DER } else { 0 })
}

/// Does `w` start at `p` in `t`? (A loop: the words are short, and a call of memcmp costs more.)
#[inline]
pub(crate) fn starts_with(t: &[u16], p: usize, w: &[u16]) -> bool {
    t.len() - p >= w.len() && t[p..p + w.len()].iter().zip(w).all(|(a, b)| a == b)
}

/// The pair table before any word or literal is handed over (built on the heap: a table in the state's
/// initial value would be 16 KiB in the module).
pub(crate) fn empty_pairs() -> Box<[u8; TABLE]> {
    let mut table: Box<[u8; TABLE]> = vec![0u8; TABLE]
        .into_boxed_slice()
        .try_into()
        .expect("TABLE units");
    for (k, f) in table.iter_mut().enumerate() {
        *f = unit_flags(k / 129, k % 129);
    }
    table
}

/// The pair table from the keywords' and the anchors' lists (after either is handed over).
pub(crate) fn rebuild(s: &mut State) {
    let bit = |bits: &[u64], k: usize| {
        bits.get(k >> 6)
            .is_some_and(|x| x & (1u64 << (k & 63)) != 0)
    };
    for k in 0..TABLE {
        let listed = k < PAIRS;
        s.pair_flags[k] = unit_flags(k / 129, k % 129)
            | (if listed && bit(&s.keywords.some, k) {
                KEYWORD
            } else {
                0
            })
            | (if listed && bit(&s.anchors.some, k) {
                ANCHOR
            } else {
                0
            });
    }
}

/// The sixteen units at `t[i..]` as bytes, each at most 128 (a unit that is not ASCII reads 128, as `code`).
#[target_feature(enable = "simd128")]
fn codes16(t: &[u16], i: usize) -> core::arch::wasm32::v128 {
    use core::arch::wasm32::{u16x8_min, u16x8_splat, u8x16_narrow_i16x8, v128, v128_load};
    let c = &t[i..i + 16];
    // SAFETY: `c` is sixteen u16 units, 32 bytes; v128_load has no alignment requirement.
    let (a, b) = unsafe { (v128_load(c.as_ptr() as *const v128), v128_load(c.as_ptr().add(8) as *const v128)) };
    let cap = u16x8_splat(128);
    // Capped first: narrowing reads a unit from 0x8000 as negative (0).
    u8x16_narrow_i16x8(u16x8_min(a, cap), u16x8_min(b, cap))
}

/// Which of the sixteen offsets from `i` (at least 1; `t` holds a unit after the sixteenth) have a flag in
/// the pair table that `run` may want there, as bits, lowest first: the laced key's only where the unit
/// before is no token character. With WebAssembly's 128-bit instructions the pairs' places in the table and
/// the units before are read sixteen at a look; the table is then read at each place without a branch, so
/// the offsets with no flag (most of them) cost a few instructions each. Each offset's place goes into
/// `places` and its flags (the laced key's dropped after a token character) into `found`, so that `run`
/// checks only the offsets with a flag without reading their units again (`check` drops REF once a
/// reference is found, as `visit` does).
#[target_feature(enable = "simd128")]
fn flagged16(flags: &[u8; TABLE], t: &[u16], i: usize, places: &mut [u16; 16], found: &mut [u8; 16]) -> u32 {
    use core::arch::wasm32::{
        i16x8_add, i16x8_mul, i16x8_splat, u16x8_extend_high_u8x16, u16x8_extend_low_u8x16, u8x16_bitmask,
        u8x16_eq, u8x16_lt, u8x16_ne, u8x16_splat, u8x16_sub, v128, v128_and, v128_load, v128_not, v128_or, v128_store,
    };
    let b = codes16(t, i - 1);
    let c = codes16(t, i);
    let d = codes16(t, i + 1);
    let row = i16x8_splat(129);
    // SAFETY: `places` is sixteen u16 units, 32 bytes; v128_store has no alignment requirement.
    unsafe {
        let at = places.as_mut_ptr() as *mut v128;
        v128_store(at, i16x8_add(i16x8_mul(u16x8_extend_low_u8x16(c), row), u16x8_extend_low_u8x16(d)));
        v128_store(at.add(1), i16x8_add(i16x8_mul(u16x8_extend_high_u8x16(c), row), u16x8_extend_high_u8x16(d)));
    }
    // The unit before is a token character (`TOKEN_UNIT`): an ASCII letter or digit, `-` or `_` (a unit that
    // is not ASCII reads 128, none of them).
    let letter = u8x16_lt(u8x16_sub(v128_or(b, u8x16_splat(0x20)), u8x16_splat(0x61)), u8x16_splat(26));
    let digit = u8x16_lt(u8x16_sub(b, u8x16_splat(0x30)), u8x16_splat(10));
    let joiner = v128_or(u8x16_eq(b, u8x16_splat(0x2d)), u8x16_eq(b, u8x16_splat(0x5f)));
    let token_lanes = v128_or(v128_or(letter, digit), joiner);
    for (f, &k) in found.iter_mut().zip(places.iter()) {
        // SAFETY: both units are at most 128, so k = c * 129 + d < 129 * 129 = TABLE.
        *f = unsafe { *flags.get_unchecked(k as usize) };
    }
    // SAFETY: `found` is sixteen bytes; v128_load has no alignment requirement.
    let bytes = unsafe { v128_load(found.as_ptr() as *const v128) };
    // The laced key's flag dropped where the unit before is a token character, as `visit` drops it.
    let bytes = v128_and(bytes, v128_or(v128_not(token_lanes), u8x16_splat(!LACED)));
    unsafe { v128_store(found.as_mut_ptr() as *mut v128, bytes) };
    u32::from(u8x16_bitmask(u8x16_ne(bytes, u8x16_splat(0))))
}

/// Per row of the pair table: 1 when its unit is a token character (laced.rs `is_token_code`), else 0.
static TOKEN_UNIT: [u8; 129] = {
    let mut out = [0u8; 129];
    let mut c = 0;
    while c < 128 {
        out[c] = matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a | 0x2d | 0x5f) as u8;
        c += 1;
    }
    out
};

/// The unit's row or column of the pair table: itself when ASCII, else 128.
#[inline(always)]
fn code(u: u16) -> usize {
    if u < 128 {
        u as usize
    } else {
        128
    }
}

pub(crate) fn run(s: &mut State, units: usize) {
    s.keywords.clear();
    s.laced.clear();
    s.anchors.clear();
    s.joins.clear();
    s.html_ref = false;
    s.ders.clear();
    let n = units;
    if n == 0 {
        return;
    }
    // The offsets whose pair has a flag, sixteen at a look (`flagged16`), while a unit after the sixteenth is
    // there, each checked with the flags found for it there; every other offset's pair has none `visit`
    // would want, so skipping it skips nothing.
    visit(s, n, 0);
    let mut p = 1;
    let mut places = [0u16; 16];
    let mut found = [0u8; 16];
    while p + 17 <= n {
        let mut bits = flagged16(&s.pair_flags, &s.input[..n], p, &mut places, &mut found);
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            check(s, n, p + j, places[j] as usize, found[j]);
            bits &= bits - 1;
        }
        p += 16;
    }
    while p < n {
        visit(s, n, p);
        p += 1;
    }
}

/// Offset `p` of the search of the first `n` units of the input: the pair (this unit, the next) says
/// whether a word or a literal may start here, and whether a laced key may if this offset starts a token
/// (the unit before is no token character). REF is asked until a reference is found.
#[inline(always)]
fn visit(s: &mut State, n: usize, p: usize) {
    let t = &s.input[..n];
    let c = code(t[p]);
    let d = if p + 1 < n { code(t[p + 1]) } else { 128 };
    let k = c * 129 + d;
    let token_before = p > 0 && TOKEN_UNIT[code(t[p - 1])] != 0;
    let wanted = KEYWORD
        | ANCHOR
        | JOIN
        | DER
        | (if s.html_ref { 0 } else { REF })
        | (if token_before { 0 } else { LACED });
    check(s, n, p, k, s.pair_flags[k] & wanted);
}

/// At offset `p`, whose pair is `k` in the table: the checks of the flags `f` the search wants there (REF
/// dropped here once a reference is found).
#[inline(always)]
fn check(s: &mut State, n: usize, p: usize, k: usize, f: u8) {
    let f = if s.html_ref { f & !REF } else { f };
    if f == 0 {
        return;
    }
    let t = &s.input[..n];
    if f & LACED != 0 {
        s.laced.check(t, p);
    }
    if f & KEYWORD != 0 {
        s.keywords.check(t, p, k);
    }
    if f & ANCHOR != 0 {
        s.anchors.check(t, p, k);
    }
    if f & JOIN != 0 {
        s.joins.check(t, p);
    }
    if f & REF != 0 && crate::refs::ref_at(t, p) {
        s.html_ref = true;
    }
    if f & DER != 0 {
        s.ders.check(t, p);
    }
}

/// The joins of the first `units` units of the input alone, for a text `run` does not read (the boundary
/// pass's joined request): `check` at the offsets where `run` calls it, each unit that starts a join or the
/// quick look (found eight units a look: joins.rs `starts8`) whose pair with the next unit has the table's
/// JOIN flag, in order. So the joins are those `run` would find, without its other searches.
pub(crate) fn joins_only(s: &mut State, units: usize) {
    s.joins.clear();
    let t = &s.input[..units];
    let n = t.len();
    let flags: &[u8; TABLE] = &s.pair_flags;
    let mut at = |p: usize| {
        let d = if p + 1 < n { code(t[p + 1]) } else { 128 };
        if flags[code(t[p]) * 129 + d] & JOIN != 0 {
            s.joins.check(t, p);
        }
    };
    let mut i = 0;
    while i + 8 <= n {
        let mut bits = crate::joins::starts8(t, i);
        while bits != 0 {
            at(i + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
        i += 8;
    }
    for (p, &c) in t.iter().enumerate().skip(i) {
        if crate::joins::starts(c) {
            at(p);
        }
    }
}
