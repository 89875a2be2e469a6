//! Where src/guard/private-key.ts `findHeaderlessKeys` may find a key body without its header: every
//! offset where its `DER_START` expression matches when tried there (`MII` or `MIG` and 9 base64 units,
//! `M`, one of `A` to `H` and 10 base64 units, or the OpenSSH magic `b3BlbnNzaC1rZXktdjE`), ascending.
//! The TypeScript walks this list as its global search would walk the text (from where the last match,
//! or the last key block, ended); the checks at each match (the unit before it, the decoded DER header)
//! stay there. search.rs asks at every `M` followed by `A` to `I` and every `b` followed by `3`.

const OPENSSH: &[u8] = b"b3BlbnNzaC1rZXktdjE";

#[inline]
fn base64(c: u16) -> bool {
    matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a | 0x2b | 0x2f)
}

/// Does `DER_START` match at `p`?
pub(crate) fn der_at(t: &[u16], p: usize) -> bool {
    let n = t.len();
    if t[p] == 0x62 {
        return n - p >= OPENSSH.len()
            && t[p..p + OPENSSH.len()]
                .iter()
                .zip(OPENSSH)
                .all(|(&a, &b)| a == b as u16);
    }
    // `M`: `MII` or `MIG` then 9 base64 units, or `M[A-H]` then 10: the 12 units from `p` either way.
    if n - p < 12 {
        return false;
    }
    let second = t[p + 1];
    let from = match second {
        0x49 if t[p + 2] == 0x49 || t[p + 2] == 0x47 => 3,
        0x41..=0x48 => 2,
        _ => return false,
    };
    t[p + from..p + 12].iter().all(|&c| base64(c))
}

#[derive(Default)]
pub(crate) struct Ders {
    found: Vec<i32>,
}

impl Ders {
    pub(crate) fn clear(&mut self) {
        self.found.clear();
    }

    #[inline]
    pub(crate) fn check(&mut self, t: &[u16], p: usize) {
        if der_at(t, p) {
            self.found.push(p as i32);
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.found.len()
    }

    pub(crate) fn found(&self) -> *const i32 {
        self.found.as_ptr()
    }
}
