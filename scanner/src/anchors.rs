//! Where the secret pass's direct shapes may start (src/guard/secrets.ts `anchorStarts`): every offset where
//! one of their literal prefixes (`sk-`, the AWS key-id prefixes in both cases; handed over by the host once,
//! each with the number of its group) starts, as `offset * 8 + group`, ascending. Each of those shapes' own
//! expression (a lookbehind first, which V8 tries at every offset of the text) then runs only at these
//! offsets, in TypeScript. search.rs reads every offset once for this, keywords.rs and laced.rs.

/// Groups fit in the low three bits of an entry.
pub(crate) const GROUP_BITS: u32 = 3;

#[derive(Default)]
pub(crate) struct Anchors {
    /// Per ASCII first unit: the literals that start with it and their groups, in the host's order.
    by_first: Vec<Vec<(Vec<u16>, u8)>>,
    /// Per ASCII unit and the unit after it (first * 129 + second, 128 for a unit that is not ASCII or the
    /// end of the text): may a literal start there?
    gate: Vec<bool>,
    starts: Vec<i32>,
}

impl Anchors {
    /// Takes the literals (NUL-separated in `t`, ASCII, two units or more) and, per literal, its group.
    pub(crate) fn set(&mut self, t: &[u16], groups: &[u32]) {
        self.by_first = (0..128).map(|_| Vec::new()).collect();
        self.gate = vec![false; 128 * 129];
        for (w, &g) in t.split(|&c| c == 0).filter(|w| !w.is_empty()).zip(groups) {
            // The host hands over ASCII literals of two units or more only; another would never be found.
            if w.len() < 2 || w.iter().any(|&c| c >= 128) {
                continue;
            }
            let first = w[0] as usize;
            self.gate[first * 129 + w[1] as usize] = true;
            self.by_first[first].push((w.to_vec(), g as u8));
        }
    }

    pub(crate) fn clear(&mut self) {
        self.starts.clear();
    }

    /// At `p` (ASCII unit `c`, then `d` as keywords.rs reads it): records `p` and the group of the first
    /// literal that starts there.
    #[inline]
    pub(crate) fn check(&mut self, t: &[u16], p: usize, c: usize, d: usize) {
        if self.gate.is_empty() || !self.gate[c * 129 + d] {
            return;
        }
        for (w, g) in &self.by_first[c] {
            if t.len() - p >= w.len() && t[p..p + w.len()] == w[..] {
                self.starts
                    .push(((p as u32) << GROUP_BITS | *g as u32) as i32);
                return;
            }
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.starts.len()
    }

    pub(crate) fn starts(&self) -> *const u8 {
        self.starts.as_ptr() as *const u8
    }
}
