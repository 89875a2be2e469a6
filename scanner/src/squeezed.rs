//! The squeezed reading of the block rules' explicit terms (src/guard/squeezed.ts `SqueezedMatcher`), unit
//! for unit: each text of the word stream (already normalised and lowercased, kept by `words_add_kept`) is
//! read twice - with the symbols that stand for letters read as letters (`!` as `i`, `()` as `o`, `|-|` as
//! `h`), and with them squeezed out too - as a sequence of letter classes (leetspeak and look-alike letters
//! one class, every other character squeezed out), each class unit remembering where its character is in
//! the text. A term (its words joined, as classes) is found at a class unit when the character before its
//! first one is not a letter or a digit, the character after its last one is not either (unless the term
//! ends in `*`), and the text there does not start one of the ordinary words that hold a term.
//!
//! Every table (the classes, the symbols, the digraphs, the ordinary words, the terms) is handed over by the
//! host from squeezed.ts, so both engines read with the same ones. The hits are (term, text) pairs, in the
//! reference's order: by text, then the symbols reading before the other, then by term.
//!
//! Neither reading is built. One walk over each text serves both: letters and digits inside a word are
//! passed over at one look each (no term starts there, and no digraph holds one); a unit that does not
//! follow a letter or digit and reads as some term's first class is read on from, as far as the terms that
//! start with that class need, in the reading it belongs to (the symbols reading's units are followed across
//! its digraphs, so the walk starts only where one of its units starts). Linear in the text for a given
//! rules file: each look reads at most as many class units as the longest term. That walk is not a walk of
//! its own: the word stream's (words.rs `add`) steps it (`Walk::step`) at every unit it does not pass over,
//! so each text is read once for the words and both readings.

use crate::State;

#[derive(Default)]
pub(crate) struct Squeezed {
    /// Per code unit: the class it reads as (0: squeezed out), and, in the symbols reading, first.
    letters: Vec<u16>,
    symbols: Vec<u16>,
    /// Symbols that read as one letter together, in the host's order, and per ASCII unit whether one starts
    /// with it.
    digraphs: Vec<(Vec<u16>, u16)>,
    digraph_first: Vec<bool>,
    /// Per ASCII unit: is it a letter or digit (words.ts isWordUnit)? Does some term start with its class,
    /// in the other reading, and in the symbols reading (for a unit that starts no digraph)?
    ascii_word: Vec<bool>,
    plain_first: Vec<bool>,
    symbols_first: Vec<bool>,
    /// The same per ASCII unit in one byte (WORD, PLAIN_FIRST, SYMBOLS_FIRST, DIGRAPH_FIRST), for the walk.
    ascii: Vec<u8>,
    /// Per ASCII first class: one bit per ASCII class some term that starts with it has second (all bits
    /// when one has no ASCII second class).
    second: Vec<u128>,
    /// The same per (first class, second class) pair in one byte each (index `first * 128 + second`): read at
    /// every word start, where a 128-bit shift by a variable amount costs a dozen instructions in WebAssembly.
    second_pairs: Vec<u8>,
    /// Per (first class, second class) pair, both ASCII: an index into `thirds`, the ASCII classes some term
    /// that starts with that pair has third (index 0: every class, for a pair no such list is kept for).
    third_index: Vec<u8>,
    thirds: Vec<u128>,
    ordinary: Vec<Vec<u16>>,
    /// The terms as classes, and whether each is a prefix (ends in `*`).
    terms: Vec<(Vec<u16>, bool)>,
    /// Per first class unit (ASCII), the terms that start with it; the others' in `by_other`.
    by_first: Vec<Vec<u32>>,
    by_other: Vec<(u16, u32)>,
    pub(crate) hits: Vec<i32>,
}

const WORD: u8 = 1;
const PLAIN_FIRST: u8 = 2;
const SYMBOLS_FIRST: u8 = 4;
const DIGRAPH_FIRST: u8 = 8;
/// The unit reads as the same class in both readings (it is no symbol, or a symbol of its own letter class).
const SAME: u8 = 16;

/// Reads the next number of the host's description.
fn next(d: &[u16], at: &mut usize) -> u16 {
    let v = d.get(*at).copied().unwrap_or(0);
    *at += 1;
    v
}

fn string(d: &[u16], at: &mut usize) -> Vec<u16> {
    let len = next(d, at) as usize;
    let end = (*at + len).min(d.len());
    let w = d[*at..end].to_vec();
    *at = end;
    w
}

impl Squeezed {
    /// Takes the tables, as squeezed.ts `describe` lays them out: the letter classes and the symbols as
    /// (unit, class) pairs, each list after its count; the digraphs (units, class); the ordinary words; the
    /// terms (units, prefix).
    pub(crate) fn set(&mut self, d: &[u16]) {
        let mut at = 0;
        self.letters = vec![0; 65536];
        self.symbols = vec![0; 65536];
        for table in [&mut self.letters, &mut self.symbols] {
            for _ in 0..next(d, &mut at) {
                let u = next(d, &mut at);
                table[u as usize] = next(d, &mut at);
            }
        }
        self.ascii_word = (0..128u8)
            .map(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            .collect();
        self.digraphs.clear();
        self.digraph_first = vec![false; 128];
        for _ in 0..next(d, &mut at) {
            let w = string(d, &mut at);
            let v = next(d, &mut at);
            if let Some(&c) = w.first() {
                if c < 128 {
                    self.digraph_first[c as usize] = true;
                }
                self.digraphs.push((w, v));
            }
        }
        self.ordinary.clear();
        for _ in 0..next(d, &mut at) {
            self.ordinary.push(string(d, &mut at));
        }
        self.terms.clear();
        self.by_first = vec![Vec::new(); 128];
        self.by_other.clear();
        for k in 0..next(d, &mut at) {
            let w = string(d, &mut at);
            let prefix = next(d, &mut at) != 0;
            match w.first() {
                Some(&c) if c < 128 => self.by_first[c as usize].push(k as u32),
                Some(&c) => self.by_other.push((c, k as u32)),
                None => {} // an empty term is never found
            }
            self.terms.push((w, prefix));
        }
        self.second = vec![0; 128];
        for (w, _) in &self.terms {
            if let Some(&c) = w.first().filter(|&&c| c < 128) {
                self.second[c as usize] |= match w.get(1) {
                    Some(&b) if b < 128 => 1u128 << b,
                    _ => u128::MAX,
                };
            }
        }
        self.second_pairs = (0..128 * 128)
            .map(|k| u8::from(self.second[k / 128] & (1u128 << (k % 128)) != 0))
            .collect();
        self.third_index = vec![0; 128 * 128];
        self.thirds = vec![u128::MAX];
        for (w, _) in &self.terms {
            let (Some(&c), Some(&b)) = (w.first(), w.get(1)) else {
                continue;
            };
            if c >= 128 || b >= 128 || self.second[c as usize] == u128::MAX {
                continue; // a first class with a term of no ASCII second: every pair reads on
            }
            let k = c as usize * 128 + b as usize;
            if self.third_index[k] == 0 {
                if self.thirds.len() > 255 {
                    continue; // (never with today's terms) the pair keeps index 0 for good
                }
                self.third_index[k] = self.thirds.len() as u8;
                self.thirds.push(0);
            }
            let slot = &mut self.thirds[self.third_index[k] as usize];
            *slot |= match w.get(2) {
                Some(&d) if d < 128 => 1u128 << d,
                _ => u128::MAX,
            };
        }
        let first = |c: u16| {
            c != 0
                && if c < 128 {
                    !self.by_first[c as usize].is_empty()
                } else {
                    self.by_other.iter().any(|&(f, _)| f == c)
                }
        };
        self.plain_first = (0..128).map(|u| first(self.letters[u])).collect();
        self.symbols_first = (0..128)
            .map(|u| {
                let c = self.symbols[u];
                first(if c != 0 { c } else { self.letters[u] })
            })
            .collect();
        self.ascii = (0..128)
            .map(|u| {
                ((self.ascii_word[u] as u8) * WORD)
                    | ((self.plain_first[u] as u8) * PLAIN_FIRST)
                    | ((self.symbols_first[u] as u8) * SYMBOLS_FIRST)
                    | ((self.digraph_first[u] as u8) * DIGRAPH_FIRST)
                    | (u8::from(self.symbols[u] == 0 || self.symbols[u] == self.letters[u]) * SAME)
            })
            .collect();
    }

    fn has_terms(&self) -> bool {
        !self.terms.is_empty()
    }
}

/// What the unit at `i` of `t` reads as in one reading (0: squeezed out), and how many units it takes
/// (squeezed.ts `squeeze`, one step).
#[inline(always)]
fn class_at(s: &mut State, q: &Squeezed, t: &[u16], i: usize, symbols: bool) -> (u16, usize) {
    let u = t[i];
    if symbols {
        if u < 128 && q.digraph_first[u as usize] {
            for (d, v) in &q.digraphs {
                if crate::search::starts_with(t, i, d) {
                    return (*v, d.len());
                }
            }
        }
        let c = q.symbols[u as usize];
        if c != 0 {
            return (c, 1);
        }
    }
    let c = q.letters[u as usize];
    // Letters and digits of other scripts read as themselves.
    if c == 0 && u >= 0x80 && s.is_word_unit(u) {
        return (u, 1);
    }
    (c, 1)
}

/// Is `t[i]` a letter or digit (false outside the text)?
#[inline(always)]
fn word_char(s: &mut State, t: &[u16], i: usize) -> bool {
    i < t.len() && s.is_word_unit(t[i])
}

/// The reading from a unit on, read as far as a term needs: the class units (class, and the offset just
/// past it), shared by every term that starts there.
#[derive(Default)]
struct Ahead {
    units: Vec<(u16, usize)>,
    /// Where reading on resumes.
    next: usize,
}

impl Ahead {
    /// The class unit `k` of the reading from the start, reading on as needed; None at the end of the text.
    #[inline]
    fn get(
        &mut self,
        s: &mut State,
        q: &Squeezed,
        t: &[u16],
        k: usize,
        symbols: bool,
    ) -> Option<(u16, usize)> {
        while self.units.len() <= k {
            if self.next >= t.len() {
                return None;
            }
            let (c, width) = class_at(s, q, t, self.next, symbols);
            self.next += width;
            if c != 0 {
                self.units.push((c, self.next));
            }
        }
        Some(self.units[k])
    }
}

/// Is term `id` found in the reading at `i` (whose first class unit is `ahead`'s first, the term's first
/// class): its class units follow, whatever is squeezed out between them; it ends a word unless it is a
/// prefix; the text there starts no ordinary word (squeezed.ts `found`)?
fn found_at(
    s: &mut State,
    q: &Squeezed,
    t: &[u16],
    i: usize,
    ahead: &mut Ahead,
    id: usize,
    symbols: bool,
) -> bool {
    let (w, prefix) = &q.terms[id];
    let mut end = ahead.units[0].1;
    for (k, &c) in w.iter().enumerate().skip(1) {
        match ahead.get(s, q, t, k, symbols) {
            Some((d, e)) if d == c => end = e,
            _ => return false,
        }
    }
    if !*prefix && word_char(s, t, end) {
        return false;
    }
    !q.ordinary
        .iter()
        .any(|o| crate::search::starts_with(t, i, o))
}

/// Does the unit after `i` (a unit of one code unit whose class is `c`, ASCII) rule out every term that starts
/// with `c`? It does when it is an ASCII letter or digit (so the reading's next class unit in both readings)
/// whose class no such term has second: most words that start with a term's first letter, at one look.
#[inline(always)]
fn second_rules_out(q: &Squeezed, t: &[u16], i: usize, c: u16) -> bool {
    match t.get(i + 1) {
        Some(&v) if v < 128 && q.ascii_word[v as usize] => {
            let b = q.letters[v as usize];
            b < 128 && q.second_pairs[c as usize * 128 + b as usize] == 0
        }
        _ => false,
    }
}

/// Do the two units after `i` (whose class is `c`, ASCII) rule out every term that starts with `c`? They do
/// when both are ASCII letters or digits that read as one class in both readings and start no digraph (so
/// they are the reading's next two class units in both) and no such term has their classes second and third.
#[inline(always)]
fn third_rules_out(q: &Squeezed, t: &[u16], i: usize, c: u16) -> bool {
    match (t.get(i + 1), t.get(i + 2)) {
        (Some(&v), Some(&w))
            if v < 128
                && w < 128
                && q.ascii[v as usize] & (WORD | SAME | DIGRAPH_FIRST) == WORD | SAME
                && q.ascii[w as usize] & (WORD | SAME | DIGRAPH_FIRST) == WORD | SAME =>
        {
            let (b, d) = (q.letters[v as usize], q.letters[w as usize]);
            b != 0
                && d != 0
                && b < 128
                && d < 128
                && q.thirds[q.third_index[c as usize * 128 + b as usize] as usize] & (1u128 << d)
                    == 0
        }
        _ => false,
    }
}

/// Looks at the terms whose first class is `c`, in one reading, at unit `i` (of `width` units): marks those
/// found there in `found`.
#[allow(clippy::too_many_arguments)]
fn try_at(
    s: &mut State,
    q: &Squeezed,
    t: &[u16],
    i: usize,
    c: u16,
    width: usize,
    symbols: bool,
    ahead: &mut Ahead,
    found: &mut [bool],
) {
    let ids: &[u32] = if c < 128 {
        &q.by_first[c as usize]
    } else {
        &[]
    };
    if ids.is_empty() && (c < 128 || !q.by_other.iter().any(|&(f, _)| f == c)) {
        return;
    }
    ahead.units.clear();
    ahead.units.push((c, i + width));
    ahead.next = i + width;
    for &id in ids {
        let id = id as usize;
        if !found[id] && found_at(s, q, t, i, ahead, id, symbols) {
            found[id] = true;
        }
    }
    if c >= 128 {
        for &(f, id) in &q.by_other {
            let id = id as usize;
            if f == c && !found[id] && found_at(s, q, t, i, ahead, id, symbols) {
                found[id] = true;
            }
        }
    }
}

/// Where the walk over one text is between two units: the walk looks only at the units that read as some
/// term's first class and do not follow a letter or digit, and reads on from there, term by term, as the whole
/// reading would (each is where one of its units starts: the symbols reading's units are followed across its
/// digraphs). Letters and digits inside a word need no step (`passes`): the word stream's walk (words.rs
/// `add`), which reads every unit anyway, steps this one at every other unit, so each text is read once for
/// both (`begin`, `step`, `finish`).
#[derive(Default)]
pub(crate) struct Walk {
    /// Where the symbols reading's next unit starts (the unit stepped, unless it is inside a digraph).
    symbols_at: usize,
    /// Does the unit before the next one make words?
    pub(crate) after_word: bool,
    ahead: Ahead,
    /// Per reading (symbols, then the other), per term: found in the current text?
    found: [Vec<bool>; 2],
}

impl Walk {
    /// Starts a text: nothing found yet.
    pub(crate) fn begin(&mut self, q: &Squeezed) {
        self.symbols_at = 0;
        self.after_word = false;
        for f in self.found.iter_mut() {
            f.clear();
            f.resize(q.terms.len(), false);
        }
    }

    /// May unit `u` go without a step (a letter or digit inside a word: each a unit of its own in both
    /// readings, no digraph holds one, and no term starts there)?
    #[inline(always)]
    pub(crate) fn passes(&self, q: &Squeezed, u: u16) -> bool {
        self.after_word && u < 128 && q.ascii[u as usize] & WORD != 0
    }

    /// Reads unit `i` of `t` (every unit `passes` does not pass, in order). Most units (a space, a word's
    /// first letter that no term starts with, punctuation) start nothing: those cost a table look here, in
    /// the word stream's loop, and the rest a call.
    #[inline(always)]
    pub(crate) fn step(&mut self, s: &mut State, q: &Squeezed, t: &[u16], i: usize) {
        let u = t[i];
        if u < 128 {
            let flags = q.ascii[u as usize];
            if flags & (PLAIN_FIRST | SYMBOLS_FIRST | DIGRAPH_FIRST) == 0
                || (self.after_word && flags & DIGRAPH_FIRST == 0)
            {
                // No term is tried here (as below, with nothing to try): the symbols reading's next unit
                // starts after this one unless a digraph spans it, and the next unit follows a word if
                // this one makes words.
                if self.symbols_at <= i {
                    self.symbols_at = i + 1;
                }
                self.after_word = flags & WORD != 0;
                return;
            }
            // A word's first letter or digit whose next one no term that starts with its class has second,
            // or whose next two no such term has second and third: in both readings (one class), nothing
            // is tried (as below).
            if flags & (WORD | DIGRAPH_FIRST | SAME) == WORD | SAME
                && (second_rules_out(q, t, i, q.letters[u as usize])
                    || third_rules_out(q, t, i, q.letters[u as usize]))
            {
                if self.symbols_at <= i {
                    self.symbols_at = i + 1;
                }
                self.after_word = true;
                return;
            }
        }
        self.step_at(s, q, t, i);
    }

    /// `step` where a term may be tried (or a digraph read, or the unit is not ASCII).
    #[inline(never)]
    fn step_at(&mut self, s: &mut State, q: &Squeezed, t: &[u16], i: usize) {
        let u = t[i];
        let after_word = self.after_word;
        let [found_symbols, found_plain] = &mut self.found;
        let ahead = &mut self.ahead;
        self.symbols_at = self.symbols_at.max(i);
        if u < 128 {
            // ASCII (most units): what matters is read from per-unit tables, class_at only at a digraph's start.
            let a = u as usize;
            let flags = q.ascii[a];
            if !after_word && flags & PLAIN_FIRST != 0 && !second_rules_out(q, t, i, q.letters[a]) {
                try_at(s, q, t, i, q.letters[a], 1, false, ahead, found_plain);
            }
            if self.symbols_at == i {
                if flags & DIGRAPH_FIRST != 0 {
                    let (c, width) = class_at(s, q, t, i, true);
                    if c != 0 && !after_word {
                        try_at(s, q, t, i, c, width, true, ahead, found_symbols);
                    }
                    self.symbols_at += width;
                } else {
                    if !after_word && flags & SYMBOLS_FIRST != 0 {
                        let c = if q.symbols[a] != 0 {
                            q.symbols[a]
                        } else {
                            q.letters[a]
                        };
                        if !second_rules_out(q, t, i, c) {
                            try_at(s, q, t, i, c, 1, true, ahead, found_symbols);
                        }
                    }
                    self.symbols_at += 1;
                }
            }
            self.after_word = flags & WORD != 0;
            return;
        }
        if !after_word {
            let (c, _) = class_at(s, q, t, i, false);
            if c != 0 {
                try_at(s, q, t, i, c, 1, false, ahead, found_plain);
            }
        }
        if self.symbols_at == i {
            let (c, width) = class_at(s, q, t, i, true);
            if c != 0 && !after_word {
                try_at(s, q, t, i, c, width, true, ahead, found_symbols);
            }
            self.symbols_at += width;
        }
        self.after_word = s.is_word_unit(u);
    }

    /// Ends text number `source`: its hits, (term, text) pairs into `q.hits`, the symbols reading's first,
    /// then the other's, each in the terms' order.
    pub(crate) fn finish(&self, q: &mut Squeezed, source: i32) {
        for reading in &self.found {
            for (id, &f) in reading.iter().enumerate() {
                if f {
                    q.hits.push(id as i32);
                    q.hits.push(source);
                }
            }
        }
    }
}

impl Squeezed {
    /// Has the squeezed reading any term to look for (else the word stream walks alone)?
    pub(crate) fn active(&self) -> bool {
        self.has_terms()
    }

    /// Forgets the last request's hits.
    pub(crate) fn clear_hits(&mut self) {
        self.hits.clear();
    }
}
