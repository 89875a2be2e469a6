//! The secret pass's searches in one reading of a text: at every offset, whether a key-like word starts
//! there (keywords.rs), whether a laced key may (laced.rs, only at token starts whose unit is `A` or a
//! lower-case letter: every first character its expression names), and whether a direct shape's literal
//! prefix does (anchors.rs).

use crate::laced::is_token_code;
use crate::State;

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
            s.keywords.check(t, p, c, d);
            s.anchors.check(t, p, c, d);
        }
        prev_token = is_token_code(c as u32);
    }
}
