//! The keyword search of src/guard/generic.ts (`keywordStarts`): every offset where one of the key-like
//! words (`KEYWORDS`, handed over by the host once) starts, overlapping occurrences included, ascending.
//! The words are ASCII literals matched case-sensitively, so a table of first two units narrows each offset
//! to the few words that can start there (usually none). search.rs reads every offset once for this,
//! laced.rs and anchors.rs.

#[derive(Default)]
pub(crate) struct Keywords {
    words: Vec<Vec<u16>>,
    /// Per ASCII unit and the unit after it (`pair`): the indices of the words that may start there, in the
    /// host's order (a one-unit word under every second unit). Most offsets of prose have none (a first
    /// letter alone is shared by a word every few characters).
    by_pair: Vec<Vec<u16>>,
    /// One bit per pair: is its list not empty? (Read first: 2 KiB, where the lists are 200.)
    pub(crate) some: Vec<u64>,
    starts: Vec<i32>,
}

/// One bit per list: is it not empty?
pub(crate) fn bits<T>(lists: &[Vec<T>]) -> Vec<u64> {
    let mut out = vec![0u64; lists.len().div_ceil(64)];
    for (k, l) in lists.iter().enumerate() {
        if !l.is_empty() {
            out[k >> 6] |= 1 << (k & 63);
        }
    }
    out
}

/// The index of ASCII unit `c` followed by `d` (128 for a unit that is not ASCII, or the end of the text).
#[inline]
pub(crate) fn pair(c: usize, d: usize) -> usize {
    c * 129 + d
}

impl Keywords {
    /// Takes the words, NUL-separated, from `t`.
    pub(crate) fn set(&mut self, t: &[u16]) {
        self.words = t
            .split(|&c| c == 0)
            .filter(|w| !w.is_empty())
            .map(|w| w.to_vec())
            .collect();
        self.by_pair = vec![Vec::new(); 128 * 129];
        for (i, w) in self.words.iter().enumerate() {
            // The words are ASCII (the host checks): one with another unit would never be found.
            if w.iter().any(|&c| c >= 128) {
                continue;
            }
            let first = w[0] as usize;
            if w.len() == 1 {
                (0..129).for_each(|d| self.by_pair[pair(first, d)].push(i as u16));
            } else {
                self.by_pair[pair(first, w[1] as usize)].push(i as u16);
            }
        }
        self.some = bits(&self.by_pair);
    }

    /// Forgets the last search's starts.
    pub(crate) fn clear(&mut self) {
        self.starts.clear();
    }

    /// At `p`, whose first two units make `pair` `k`: records `p` when a word starts there.
    #[inline]
    pub(crate) fn check(&mut self, t: &[u16], p: usize, k: usize) {
        let Some(ws) = self.by_pair.get(k) else {
            return; // no words handed over yet
        };
        for &i in ws {
            let w = &self.words[i as usize];
            if crate::search::starts_with(t, p, w) {
                self.starts.push(p as i32);
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
