//! Whether a text holds an HTML character reference, as src/guard/decoders.ts `htmlDecodedView` asks
//! before it builds the decoded view (its `HAS_REF` expression: `&`, then `#` and 1 to 7 digits, `#x` and
//! 1 to 6 hex digits, or a letter and 1 to 31 letters or digits, then `;`). search.rs asks it at every `&`
//! followed by `#` or a letter, in its one reading of the text, until one is found. Each run is bounded
//! and followed by `;`, which none of its units is: the greedy reading is the only one that can match.

use crate::units::at;

/// The run of units `class` accepts from `i`, counted up to `max + 1`.
#[inline]
fn run(t: &[u16], i: usize, max: usize, class: fn(u32) -> bool) -> usize {
    let mut n = 0;
    while n <= max && class(at(t, i + n)) {
        n += 1;
    }
    n
}

fn digit(c: u32) -> bool {
    (0x30..=0x39).contains(&c)
}

fn hex(c: u32) -> bool {
    digit(c) || (0x41..=0x46).contains(&c) || (0x61..=0x66).contains(&c)
}

fn letter(c: u32) -> bool {
    (0x41..=0x5a).contains(&c) || (0x61..=0x7a).contains(&c)
}

fn alnum(c: u32) -> bool {
    digit(c) || letter(c)
}

/// Does a reference start at `p` (a `&`)?
pub(crate) fn ref_at(t: &[u16], p: usize) -> bool {
    let c = at(t, p + 1);
    let ends =
        |from: usize, n: usize, max: usize| (1..=max).contains(&n) && at(t, from + n) == 0x3b;
    if c == 0x23 {
        let n = run(t, p + 2, 7, digit);
        if ends(p + 2, n, 7) {
            return true;
        }
        if (at(t, p + 2) | 0x20) == 0x78 {
            let n = run(t, p + 3, 6, hex);
            return ends(p + 3, n, 6);
        }
        return false;
    }
    letter(c) && ends(p + 2, run(t, p + 2, 31, alnum), 31)
}
