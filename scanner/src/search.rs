//! The secret pass's searches in one reading of a text: at every offset, whether a key-like word starts
//! there (keywords.rs), whether a laced key may (laced.rs, only at token starts whose unit is `A` or a
//! lower-case letter: every first character its expression names), and whether a direct shape's literal
//! prefix does (anchors.rs). The words and the literals are looked up by the offset's first two units, so
//! an offset where none starts costs one empty list each.

use crate::keywords::pair;
use crate::laced::is_token_code;
use crate::State;

/// Does `w` start at `p` in `t`? (A loop: the words are short, and a call of memcmp costs more.)
#[inline]
pub(crate) fn starts_with(t: &[u16], p: usize, w: &[u16]) -> bool {
    t.len() - p >= w.len() && t[p..p + w.len()].iter().zip(w).all(|(a, b)| a == b)
}

pub(crate) fn run(s: &mut State, units: usize) {
    s.keywords.clear();
    s.laced.clear();
    s.anchors.clear();
    let t = &s.input[..units];
    let n = t.len();
    let mut prev_token = false;
    for p in 0..n {
        let c = t[p];
        if c < 128 {
            let c = c as usize;
            if !prev_token && (c == 0x41 || (0x61..=0x7a).contains(&c)) {
                s.laced.check(t, p);
            }
            let d = if p + 1 < n && t[p + 1] < 128 {
                t[p + 1] as usize
            } else {
                128
            };
            let k = pair(c, d);
            let (w, b) = (k >> 6, 1u64 << (k & 63));
            if s.keywords.some.get(w).is_some_and(|x| x & b != 0) {
                s.keywords.check(t, p, k);
            }
            if s.anchors.some.get(w).is_some_and(|x| x & b != 0) {
                s.anchors.check(t, p, k);
            }
        }
        prev_token = is_token_code(c as u32);
    }
}
