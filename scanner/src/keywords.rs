//! The keyword search of src/guard/generic.ts (`keywordStarts`): every offset where one of the key-like
//! words (`KEYWORDS`, handed over by the host once) starts, overlapping occurrences included, ascending.
//! The words are ASCII literals matched case-sensitively, so a table of first units narrows each offset to
//! the few words that can start there.

#[derive(Default)]
pub(crate) struct Keywords {
    words: Vec<Vec<u16>>,
    /// Per ASCII first unit: the indices of the words that start with it.
    by_first: Vec<Vec<u16>>,
    /// Per pair of ASCII units (first * 128 + second): does some word start with them? Most offsets of
    /// prose fail here (a first letter alone is shared by a word every few characters).
    pairs: Vec<bool>,
    /// Does a one-unit word start with this unit?
    single: Vec<bool>,
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
        self.pairs = vec![false; 128 * 128];
        self.single = vec![false; 128];
        for (i, w) in self.words.iter().enumerate() {
            // The words are ASCII (the host checks): one with another unit would never be found.
            if w.iter().any(|&c| c >= 128) {
                continue;
            }
            self.by_first[w[0] as usize].push(i as u16);
            if w.len() == 1 {
                self.single[w[0] as usize] = true;
            } else {
                self.pairs[w[0] as usize * 128 + w[1] as usize] = true;
            }
        }
    }

    /// The starts in `t`; returns how many (in `starts`).
    pub(crate) fn find(&mut self, t: &[u16]) -> usize {
        self.starts.clear();
        if self.by_first.is_empty() {
            return 0;
        }
        let n = t.len();
        for p in 0..n {
            let c = t[p] as usize;
            if c >= 128 {
                continue;
            }
            let next = if p + 1 < n { t[p + 1] as usize } else { 128 };
            if !self.single[c] && (next >= 128 || !self.pairs[c * 128 + next]) {
                continue;
            }
            for &k in &self.by_first[c] {
                let w = &self.words[k as usize];
                if p + w.len() <= n && t[p..p + w.len()] == w[..] {
                    self.starts.push(p as i32);
                    break;
                }
            }
        }
        self.starts.len()
    }

    pub(crate) fn starts(&self) -> *const u8 {
        self.starts.as_ptr() as *const u8
    }
}
