//! Where the secret pass's direct shapes may start (src/guard/secrets.ts `anchorStarts`): every offset where
//! one of their literal prefixes (`sk-`, the AWS key-id prefixes in both cases, each provider shape's
//! prefixes; handed over by the host once, each with the number of its group) starts, as
//! `offset * 32 + group`, ascending by offset, then by group (an offset where several groups' literals
//! start, `sk-` and `sk-ant-`, is listed once per group). Each of those shapes' own expression (most with a
//! lookbehind first, which V8 tries at every offset of the text) then runs only at these offsets, in
//! TypeScript. search.rs reads every offset once for this, keywords.rs and laced.rs.

use crate::keywords::pair;

/// Groups fit in the low five bits of an entry.
pub(crate) const GROUP_BITS: u32 = 5;

#[derive(Default)]
pub(crate) struct Anchors {
    /// Per ASCII unit and the unit after it (keywords.rs `pair`): the literals that start with those two
    /// units and their groups, in the host's order (ascending groups).
    by_pair: Vec<Vec<(Vec<u16>, u8)>>,
    /// One bit per pair: is its list not empty? (keywords.rs `bits`)
    pub(crate) some: Vec<u64>,
    starts: Vec<i32>,
}

impl Anchors {
    /// Takes the literals (NUL-separated in `t`, ASCII, two units or more) and, per literal, its group.
    pub(crate) fn set(&mut self, t: &[u16], groups: &[u32]) {
        self.by_pair = vec![Vec::new(); 128 * 129];
        for (w, &g) in t.split(|&c| c == 0).filter(|w| !w.is_empty()).zip(groups) {
            // The host hands over ASCII literals of two units or more only; another would never be found.
            if w.len() < 2 || w.iter().any(|&c| c >= 128) {
                continue;
            }
            self.by_pair[pair(w[0] as usize, w[1] as usize)].push((w.to_vec(), g as u8));
        }
        self.some = crate::keywords::bits(&self.by_pair);
    }

    pub(crate) fn clear(&mut self) {
        self.starts.clear();
    }

    /// At `p`, whose first two units make `pair` `k`: records `p` once with each group whose literal starts
    /// there.
    #[inline]
    pub(crate) fn check(&mut self, t: &[u16], p: usize, k: usize) {
        let Some(ws) = self.by_pair.get(k) else {
            return; // no literals handed over yet
        };
        for (w, g) in ws {
            let entry = ((p as u32) << GROUP_BITS | *g as u32) as i32;
            if self.starts.last() != Some(&entry) && crate::search::starts_with(t, p, w) {
                self.starts.push(entry);
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
