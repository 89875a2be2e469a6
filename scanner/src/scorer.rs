//! The intent word scorer of src/guard/intent.ts (`IntentScorer`), unit for unit: a text's words cut and
//! folded as words.rs cuts them (`intentWords`: the last MAX_SCORED_WORDS of them), each word's two hashes
//! (`hashString`, `hashString2`), the words read as concepts (`ConceptMap.read`: the whole word, else its
//! longest listed prefix of 3 to 14 units), the 53-bit hashes of the unigrams, bigrams and skip-pairs of
//! both readings (`addFeatureHashes`), each counted once in the order first met (`FeatureSet`), and the
//! rows of the model's weights they name summed, scaled to unit length (`score`, up to its softmax). What
//! goes back to TypeScript is the sums per class (and, for the equivalence test, the features in order);
//! the softmax stays there, so both engines take the same `Math.exp`.
//!
//! The model's tables come from TypeScript as the reference built them (feature hash per slot, row per
//! slot, the rows, the bias) with its concept lists, so both engines read one table. The sums are the same
//! to the bit: the same additions of the same products, in the same order (WebAssembly's `f64` adds and
//! multiplies round as JavaScript's do, and nothing here fuses them).

use crate::lexicon::KeyHasher;
use crate::squeezed::{Squeezed, Walk};
use crate::words::{self, fold_unit, Words};
use crate::State;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

const MAX_SCORED_WORDS: usize = 20_000;
const MIN_CONCEPT_PREFIX: usize = 3;
const MAX_CONCEPT_PREFIX: usize = 14;
const SKIP: usize = 3;
const UNI: u32 = 1;
const BI: u32 = 2;
const SKIP_PAIR: u32 = 3;
const HIGH: u32 = 1 << 21;

/// intent.ts `hashString`: FNV-1a over the UTF-16 units.
fn hash1(units: &[u16]) -> u32 {
    units.iter().fold(0x811c_9dc5u32, |h, &c| {
        (h ^ c as u32).wrapping_mul(0x0100_0193)
    })
}

/// intent.ts `hashString2`.
fn hash2(units: &[u16]) -> u32 {
    let mut h = 0x9747_b28cu32 ^ units.len() as u32;
    for &c in units {
        h = (h ^ c as u32).wrapping_mul(0x5bd1_e995);
        h ^= h >> 15;
    }
    h
}

#[inline]
fn mix(kind: u32, a: u32, b: u32) -> u32 {
    let mut h = (kind ^ a).wrapping_mul(0x9e37_79b1);
    h = (h ^ (h >> 15) ^ b).wrapping_mul(0x85eb_ca6b);
    h ^ (h >> 13)
}

#[inline]
fn mix2(kind: u32, a: u32, b: u32) -> u32 {
    let mut h = (kind ^ a).wrapping_mul(0xcc9e_2d51);
    h = (h ^ (h >> 16) ^ b).wrapping_mul(0x1b87_3593);
    h = (h ^ (h >> 13)).wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// intent.ts `key`: 21 bits of `mix2` over the second word hashes above 32 of `mix` over the first.
#[inline]
fn key(kind: u32, a: (u32, u32), b: (u32, u32)) -> u64 {
    ((mix2(kind, a.1, b.1) % HIGH) as u64) << 32 | mix(kind, a.0, b.0) as u64
}

/// Words (or prefixes) by the FNV-1a hash of their units, each with its concept's two hashes.
type Concepts = HashMap<u32, Vec<(Vec<u16>, (u32, u32))>, BuildHasherDefault<KeyHasher>>;

fn lookup(map: &Concepts, h: u32, units: &[u16]) -> Option<(u32, u32)> {
    map.get(&h)?
        .iter()
        .find(|(w, _)| w.as_slice() == units)
        .map(|&(_, c)| c)
}

/// One concept list as `Scorer::set` reads it, from `units[*at..]`: a count, then per entry the word's (or
/// prefix's) length and units, its concept's length and units.
fn concept_list(units: &[u16], at: &mut usize) -> Concepts {
    let mut next = || {
        *at += 1;
        units[*at - 1]
    };
    let mut map = Concepts::default();
    for _ in 0..next() {
        let w: Vec<u16> = (0..next()).map(|_| next()).collect();
        let c: Vec<u16> = (0..next()).map(|_| next()).collect();
        map.entry(hash1(&w))
            .or_default()
            .push((w, (hash1(&c), hash2(&c))));
    }
    map
}

/// intent.ts `FeatureSet`: distinct hashes in the order first added (open addressing on the low 32 bits,
/// linear probing, at most half full; a slot holds its hash + 1, 0 when empty).
#[derive(Default)]
struct FeatureSet {
    slots: Vec<u64>,
    order: Vec<u64>,
}

impl FeatureSet {
    fn begin(&mut self, expected: usize) {
        let mut size = 1024;
        while size < expected * 2 {
            size *= 2;
        }
        self.slots.clear();
        self.slots.resize(size, 0);
        self.order.clear();
    }

    #[inline]
    fn add(&mut self, h: u64) {
        let mask = self.slots.len() - 1;
        let mut i = (h as u32 as usize) & mask;
        loop {
            let v = self.slots[i];
            if v == 0 {
                self.slots[i] = h + 1;
                self.order.push(h);
                if self.order.len() * 2 > self.slots.len() {
                    self.grow();
                }
                return;
            }
            if v == h + 1 {
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = self.slots.len() * 2;
        let mask = size - 1;
        self.slots.clear();
        self.slots.resize(size, 0);
        for &h in &self.order {
            let mut i = (h as u32 as usize) & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = h + 1;
        }
    }
}

/// intent.ts `addFeatureHashes`: the features of one reading of the words, given as their hash pairs.
fn add_features(hs: &[(u32, u32)], out: &mut FeatureSet) {
    let n = hs.len();
    for i in 0..n {
        let a = hs[i];
        out.add(key(UNI, a, (0, 0)));
        if i + 1 < n {
            out.add(key(BI, a, hs[i + 1]));
        }
        let mut k = 2;
        while k <= SKIP + 1 && i + k < n {
            out.add(key(SKIP_PAIR, a, hs[i + k]));
            k += 1;
        }
    }
}

/// One model (one rules file names one) and what scoring a text leaves: the sums and the features.
#[derive(Default)]
pub(crate) struct Scorer {
    classes: usize,
    /// Room the host writes the tables into (`scorer_room`): slot keys as doubles, row + 1 per slot, the
    /// rows, the bias.
    pub(crate) keys_in: Vec<f64>,
    pub(crate) row_of: Vec<i32>,
    pub(crate) table: Vec<f64>,
    pub(crate) bias: Vec<f64>,
    keys: Vec<u64>,
    mask: usize,
    words: Concepts,
    prefixes: Concepts,
    /// The word stream of the text being scored (apart from the request's, which the host may still read).
    stream: Words,
    /// The words' and their concepts' hash pairs, the features, the sums.
    plain: Vec<(u32, u32)>,
    read: Vec<(u32, u32)>,
    folded: Vec<u16>,
    features: FeatureSet,
    pub(crate) sums: Vec<f64>,
}

impl Scorer {
    /// Room for a model of `slots` slots, `rows` rows and `classes` classes.
    pub(crate) fn room(&mut self, slots: usize, rows: usize, classes: usize) {
        self.classes = classes;
        self.keys_in.clear();
        self.keys_in.resize(slots, 0.0);
        self.row_of.clear();
        self.row_of.resize(slots, 0);
        self.table.clear();
        self.table.resize(rows * classes, 0.0);
        self.bias.clear();
        self.bias.resize(classes, 0.0);
    }

    /// Takes the tables just written and the concept lists (`units`: for the words, then the prefixes, a
    /// count, then per entry its length, its units, its concept's length and units).
    pub(crate) fn set(&mut self, units: &[u16]) {
        self.keys = self.keys_in.iter().map(|&k| k as u64).collect();
        self.keys_in = Vec::new();
        self.mask = self.keys.len().max(1) - 1;
        let mut at = 0usize;
        self.words = concept_list(units, &mut at);
        self.prefixes = concept_list(units, &mut at);
    }

    pub(crate) fn loaded(&self) -> bool {
        self.classes > 0 && !self.keys.is_empty()
    }

    /// intent.ts `ConceptMap.read` of one folded word: its concept's hashes, or None (the word itself).
    fn concept(&self, w: &[u16]) -> Option<(u32, u32)> {
        if let Some(c) = lookup(&self.words, hash1(w), w) {
            return Some(c);
        }
        let longest = w.len().min(MAX_CONCEPT_PREFIX);
        if longest < MIN_CONCEPT_PREFIX {
            return None;
        }
        // The prefixes' hashes, shortest first, from one pass over the units.
        let mut ph = [0u32; MAX_CONCEPT_PREFIX + 1];
        let mut h = 0x811c_9dc5u32;
        for (n, &c) in w[..longest].iter().enumerate() {
            h = (h ^ c as u32).wrapping_mul(0x0100_0193);
            ph[n + 1] = h;
        }
        (MIN_CONCEPT_PREFIX..=longest)
            .rev()
            .find_map(|n| lookup(&self.prefixes, ph[n], &w[..n]))
    }

    /// The row of feature `h` in `table`, as intent.ts `rowStart`.
    #[inline]
    fn row_start(&self, h: u64) -> Option<usize> {
        let mut i = (h as u32 as usize) & self.mask;
        loop {
            let r = self.row_of[i];
            if r == 0 {
                return None;
            }
            if self.keys[i] == h {
                return Some((r as usize - 1) * self.classes);
            }
            i = (i + 1) & self.mask;
        }
    }
}

/// Scores `t` (a text already normalised and lowercased, as `intentWords` reads it): the class sums into
/// `sums`; returns how many distinct features the text has.
pub(crate) fn score(s: &mut State, t: &[u16]) -> usize {
    let mut sc = core::mem::take(&mut s.scorer);
    // The words of `t`, cut by words.rs into the scorer's own stream: the request's stream stays as the
    // host left it.
    let request = core::mem::replace(&mut s.words, core::mem::take(&mut sc.stream));
    s.words.reset();
    let q = Squeezed::default();
    let mut walk = Walk::default();
    words::add::<false>(s, t, 0, &q, &mut walk);
    let count = s.words.count();
    let first = count.saturating_sub(MAX_SCORED_WORDS);
    sc.plain.clear();
    sc.read.clear();
    for w in first..count {
        let flags = s.words.flags[w];
        sc.folded.clear();
        let (from, to) = (s.words.start[w] as usize, s.words.end[w] as usize);
        for &unit in &t[from..to] {
            let c = fold_unit(s, unit, flags);
            if c >= 0 {
                sc.folded.push(c as u16);
            }
        }
        let own = (hash1(&sc.folded), hash2(&sc.folded));
        let read = sc.concept(&sc.folded).unwrap_or(own);
        sc.plain.push(own);
        sc.read.push(read);
    }
    sc.stream = core::mem::replace(&mut s.words, request);
    let n = count - first;
    sc.features.begin(n * 4);
    let mut features = core::mem::take(&mut sc.features);
    add_features(&sc.plain, &mut features);
    add_features(&sc.read, &mut features);
    sc.sums.clear();
    sc.sums.extend_from_slice(&sc.bias);
    let size = features.order.len();
    if size > 0 {
        let scale = 1.0 / (size as f64).sqrt();
        let k = sc.classes;
        for &h in &features.order {
            if let Some(at) = sc.row_start(h) {
                for c in 0..k {
                    sc.sums[c] += sc.table[at + c] * scale;
                }
            }
        }
    }
    sc.features = features;
    s.scorer = sc;
    size
}

/// The features of the last text scored, in the order first met (the host reads them as doubles: exact).
pub(crate) fn features(s: &mut State) -> *const u64 {
    s.scorer.features.order.as_ptr()
}
