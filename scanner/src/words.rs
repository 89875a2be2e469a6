//! The word stream of src/guard/words.ts (`WordStream.add`, `rehash`, `collapse`), unit for unit: a word
//! is a run of letters and digits (with `@`, `$` and apostrophes between them), kept as its offsets and the
//! FNV-1a hash of its folded units; leetspeak digits are read as letters in mixed words of at most 24
//! units; three or more single letters in a row become one spelled-out word.

use crate::squeezed::{Squeezed, Walk};
use crate::State;

const FNV_OFFSET: u32 = 0x811c_9dc5;
const MAX_LEET_WORD: i32 = 24;
const PREFIX_LENGTH: i32 = 3;

#[inline]
fn fnv(h: u32, c: u32) -> u32 {
    (h ^ c).wrapping_mul(0x0100_0193)
}

#[inline]
fn is_digit(c: u16) -> bool {
    (0x30..=0x39).contains(&c)
}

/// `@` reads `a`, `$` reads `s`, an apostrophe joins (0); anything else is no joiner (-1).
#[inline]
fn joiner_value(c: u16) -> i32 {
    match c {
        0x40 => 0x61,
        0x24 => 0x73,
        0x27 | 0x2019 => 0,
        _ => -1,
    }
}

fn leet(c: u16) -> u16 {
    match c {
        0x30 => 0x6f,
        0x31 => 0x69,
        0x33 => 0x65,
        0x34 => 0x61,
        0x35 => 0x73,
        0x37 => 0x74,
        _ => c,
    }
}

/// Can the characters between two single letters be part of a spelled-out word (`s a r`, `s.a.r`)?
fn spelled_gap(t: &[u16], from: usize, to: usize) -> bool {
    if to - from > 2 {
        return false;
    }
    t[from..to]
        .iter()
        .all(|&c| matches!(c, 0x20 | 0x2e | 0x2d | 0x5f | 0x2a))
}

#[derive(Default)]
pub(crate) struct Words {
    pub(crate) hash: Vec<i32>,
    pub(crate) prefix: Vec<i32>,
    pub(crate) length: Vec<i32>,
    pub(crate) text: Vec<i32>,
    pub(crate) start: Vec<i32>,
    pub(crate) end: Vec<i32>,
    pub(crate) flags: Vec<u8>,
}

impl Words {
    pub(crate) fn reset(&mut self) {
        self.hash.clear();
        self.prefix.clear();
        self.length.clear();
        self.text.clear();
        self.start.clear();
        self.end.clear();
        self.flags.clear();
    }

    pub(crate) fn count(&self) -> usize {
        self.hash.len()
    }

    pub(crate) fn column(&self, column: u32) -> *const u8 {
        match column {
            0 => self.hash.as_ptr() as *const u8,
            1 => self.prefix.as_ptr() as *const u8,
            2 => self.length.as_ptr() as *const u8,
            3 => self.text.as_ptr() as *const u8,
            4 => self.start.as_ptr() as *const u8,
            5 => self.end.as_ptr() as *const u8,
            _ => self.flags.as_ptr(),
        }
    }

    fn truncate(&mut self, n: usize) {
        self.hash.truncate(n);
        self.prefix.truncate(n);
        self.length.truncate(n);
        self.text.truncate(n);
        self.start.truncate(n);
        self.end.truncate(n);
        self.flags.truncate(n);
    }
}

/// Word character `c` of a word with `flags` as it folds, or -1 when it folds to nothing.
pub(crate) fn fold_unit(s: &mut State, c: u16, flags: u8) -> i32 {
    if s.is_word_unit(c) {
        return if flags == 1 { leet(c) as i32 } else { c as i32 };
    }
    if flags == 2 {
        return -1;
    }
    let j = joiner_value(c);
    if j > 0 {
        j
    } else {
        -1
    }
}

/// The words of `t` as text number `source`; with `SQUEEZE`, the squeezed reading's walk (squeezed.rs `Walk`)
/// is stepped in the same walk at every unit it does not pass over, so each text is read once for both.
pub(crate) fn add<const SQUEEZE: bool>(
    s: &mut State,
    t: &[u16],
    source: i32,
    q: &Squeezed,
    walk: &mut Walk,
) {
    let n = t.len();
    let mut singles: usize = 0;
    let mut i = 0usize;
    while i < n {
        if !s.is_word_unit(t[i]) {
            if SQUEEZE {
                walk.step(s, q, t, i);
            }
            i += 1;
            continue;
        }
        let start = i;
        let mut digits = 0i32;
        let mut units = 0i32;
        let mut h = FNV_OFFSET;
        let mut p = 0u32;
        while i < n {
            let mut c = t[i];
            if (0x61..=0x7a).contains(&c) {
                // a lowercase ASCII letter, nearly always (inside a word the squeezed walk passes it)
                if SQUEEZE && !walk.after_word {
                    walk.step(s, q, t, i);
                }
            } else if s.is_word_unit(c) {
                if is_digit(c) {
                    digits += 1;
                }
                if SQUEEZE && !walk.passes(q, c) {
                    walk.step(s, q, t, i);
                }
            } else {
                let j = joiner_value(c);
                if j < 0 || i + 1 >= n || !s.is_word_unit(t[i + 1]) {
                    break; // the outer loop reads this unit (and steps the squeezed walk there)
                }
                if SQUEEZE {
                    walk.step(s, q, t, i);
                }
                if j == 0 {
                    i += 1;
                    continue;
                }
                c = j as u16;
            }
            i += 1;
            h = fnv(h, c as u32);
            units += 1;
            if units == PREFIX_LENGTH {
                p = h;
            }
        }
        let leet = digits > 0 && digits < units && units <= MAX_LEET_WORD;
        let single = units == 1 && !is_digit(t[start]);
        if single && singles > 0 {
            let prev_end = *s.words.end.last().unwrap() as usize;
            if !spelled_gap(t, prev_end, start) {
                if singles >= 3 {
                    collapse(s, t, singles);
                }
                singles = 0;
            }
        }
        if !single && singles >= 3 {
            collapse(s, t, singles);
        }
        singles = if single { singles + 1 } else { 0 };
        let w = &mut s.words;
        w.hash.push(h as i32);
        w.prefix.push(p as i32);
        w.length.push(units);
        w.text.push(source);
        w.start.push(start as i32);
        w.end.push(i as i32);
        w.flags.push(if leet { 1 } else { 0 });
        if leet {
            rehash(s, t, s.words.count() - 1);
        }
    }
    if singles >= 3 {
        collapse(s, t, singles);
    }
}

/// Hashes word `w` again from its folded units (a leetspeak word: its digits read as letters).
fn rehash(s: &mut State, t: &[u16], w: usize) {
    let flags = s.words.flags[w];
    let (from, to) = (s.words.start[w] as usize, s.words.end[w] as usize);
    let mut h = FNV_OFFSET;
    let mut len = 0;
    for &unit in &t[from..to] {
        let c = fold_unit(s, unit, flags);
        if c < 0 {
            continue;
        }
        h = fnv(h, c as u32);
        len += 1;
        if len == PREFIX_LENGTH {
            s.words.prefix[w] = h as i32;
        }
    }
    s.words.hash[w] = h as i32;
}

/// The last `run` words are single letters: replace them by one word of all of them.
fn collapse(s: &mut State, t: &[u16], run: usize) {
    let w = &mut s.words;
    let count = w.count();
    let first = count - run;
    let mut h = FNV_OFFSET;
    let mut p = 0u32;
    for k in first..count {
        h = fnv(h, t[w.start[k] as usize] as u32);
        if k - first + 1 == PREFIX_LENGTH as usize {
            p = h;
        }
    }
    w.hash[first] = h as i32;
    w.prefix[first] = p as i32;
    w.length[first] = run as i32;
    w.end[first] = w.end[count - 1];
    w.flags[first] = 2;
    w.truncate(first + 1);
}
