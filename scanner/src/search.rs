//! The secret pass's searches in one reading of a text: at every offset, whether a key-like word starts
//! there (keywords.rs), whether a laced key may (laced.rs, only at token starts whose unit is `A` or a
//! lower-case letter that starts one of its prefixes), and whether a direct shape's literal
//! prefix does (anchors.rs). The words and the literals are looked up by the offset's first two units, so
//! an offset where none starts costs one empty list each.
//!
//! The walk reads each unit once and looks at two small tables: one byte per ASCII unit (is it a token
//! character; may a laced key start with it) and one byte per pair of units (does a key-like word start with
//! those two; does an anchor literal). The pair table is built from the keywords' and the anchors' lists when
//! either is handed over (`rebuild`), so an offset where nothing starts costs two loads.

use crate::keywords::pair;
use crate::State;

/// Per ASCII unit: a token character (laced.rs `is_token_code`)?
const TOKEN: u8 = 1;
/// Per ASCII unit: may a laced key start with it? Its expression names `A` and lower-case letters, and of
/// those only `a`, `g`, `h`, `n`, `r`, `s` and `x` start one of its prefixes (laced.rs `anchor_at`).
const LACED_FIRST: u8 = 2;
/// Per pair: a key-like word starts with it; an anchor literal does.
const KEYWORD: u8 = 1;
const ANCHOR: u8 = 2;
/// Entries of the pair table: 128 first units, each with 129 second ones (128: not ASCII, or the end).
pub(crate) const PAIRS: usize = 128 * 129;

const fn classes() -> [u8; 128] {
    let mut out = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        let token = matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a | 0x2d | 0x5f);
        let laced = matches!(c, 0x41 | 0x61 | 0x67 | 0x68 | 0x6e | 0x72 | 0x73 | 0x78);
        out[c] = (if token { TOKEN } else { 0 }) | (if laced { LACED_FIRST } else { 0 });
        c += 1;
    }
    out
}
static CLASS: [u8; 128] = classes();

/// Does `w` start at `p` in `t`? (A loop: the words are short, and a call of memcmp costs more.)
#[inline]
pub(crate) fn starts_with(t: &[u16], p: usize, w: &[u16]) -> bool {
    t.len() - p >= w.len() && t[p..p + w.len()].iter().zip(w).all(|(a, b)| a == b)
}

/// A pair table with nothing in it (built on the heap: a table in the state's initial value would be
/// 16 KiB of zeros in the module).
pub(crate) fn empty_pairs() -> Box<[u8; PAIRS]> {
    vec![0u8; PAIRS]
        .into_boxed_slice()
        .try_into()
        .expect("PAIRS units")
}

/// The pair table from the keywords' and the anchors' lists (after either is handed over).
pub(crate) fn rebuild(s: &mut State) {
    let bit = |bits: &[u64], k: usize| {
        bits.get(k >> 6)
            .is_some_and(|x| x & (1u64 << (k & 63)) != 0)
    };
    for k in 0..PAIRS {
        s.pair_flags[k] = (if bit(&s.keywords.some, k) { KEYWORD } else { 0 })
            | (if bit(&s.anchors.some, k) { ANCHOR } else { 0 });
    }
}

pub(crate) fn run(s: &mut State, units: usize) {
    s.keywords.clear();
    s.laced.clear();
    s.anchors.clear();
    let t = &s.input[..units];
    let n = t.len();
    let flags = &s.pair_flags;
    let mut prev_token = false;
    for p in 0..n {
        let c = t[p] as usize;
        if c >= 128 {
            prev_token = false;
            continue;
        }
        let class = CLASS[c];
        if !prev_token && class & LACED_FIRST != 0 {
            s.laced.check(t, p);
        }
        prev_token = class & TOKEN != 0;
        let d = match t.get(p + 1) {
            Some(&d) if d < 128 => d as usize,
            _ => 128,
        };
        let k = pair(c, d);
        let f = flags[k];
        if f != 0 {
            if f & KEYWORD != 0 {
                s.keywords.check(t, p, k);
            }
            if f & ANCHOR != 0 {
                s.anchors.check(t, p, k);
            }
        }
    }
}
