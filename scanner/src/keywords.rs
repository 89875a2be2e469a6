//! The keyword search of src/guard/generic.ts (`keywordStarts`): every offset where one of the key-like
//! words (`KEYWORDS`, handed over by the host once) starts, overlapping occurrences included, ascending.
//! The words are ASCII literals matched case-sensitively, so a table of first two units narrows each offset
//! to the few words that can start there. search.rs reads every offset once for this and laced.rs.

#[derive(Default)]
pub(crate) struct Keywords {
    words: Vec<Vec<u16>>,
    /// Per ASCII first unit: the indices of the words that start with it.
    by_first: Vec<Vec<u16>>,
    /// Per ASCII unit and the unit after it (first * 129 + second, 128 for a unit that is not ASCII or the
    /// end of the text): may a word start there? Most offsets of prose fail here (a first letter alone is
    /// shared by a word every few characters).
    gate: Vec<bool>,
    starts: Vec<i32>,
}

impl Keywords {
    /// Takes the words, NUL-separated, from `t`.
    pub(crate) fn set(&mut self, t: &[u16]) {
        self.words = t
            .split(|&c| c == 0)
            .filter(|w| !w.is_empty())
            .map(|w| w.to_vec())
            .collect();
        self.by_first = vec![Vec::new(); 128];
        self.gate = vec![false; 128 * 129];
        for (i, w) in self.words.iter().enumerate() {
            // The words are ASCII (the host checks): one with another unit would never be found.
            if w.iter().any(|&c| c >= 128) {
                continue;
            }
            let first = w[0] as usize;
            self.by_first[first].push(i as u16);
            if w.len() == 1 {
                (0..129).for_each(|d| self.gate[first * 129 + d] = true);
            } else {
                self.gate[first * 129 + w[1] as usize] = true;
            }
        }
    }

    /// Forgets the last search's starts.
    pub(crate) fn clear(&mut self) {
        self.starts.clear();
    }

    /// At `p` (ASCII unit `c`, then `d`: the next unit, or 128 when it is not ASCII or there is none): records
    /// `p` when a word starts there.
    #[inline]
    pub(crate) fn check(&mut self, t: &[u16], p: usize, c: usize, d: usize) {
        if !self.gate[c * 129 + d] {
            return;
        }
        for &k in &self.by_first[c] {
            let w = &self.words[k as usize];
            if t.len() - p >= w.len() && t[p..p + w.len()] == w[..] {
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
