//! The term lists of src/guard/lexical.ts (`LexicalMatcher`) matched on the word stream (words.rs), unit
//! for unit as `hits` walks them: a word trie keyed by word hashes (whole words, and the first three
//! letters of a prefix term), shared by every detector of one matcher, and a second trie of multi-word
//! terms written as one word, read only for spelled-out words. What a walk finds goes back to TypeScript as
//! triples (tag, first word, last word) in the order the reference records them; which detector, near
//! group and set a tag stands for, and the findings, stay in TypeScript, shared by both engines.
//!
//! The trie is rebuilt here from the matcher's terms, in the order it added them, with the same edge
//! rules (`edgeTo`: one edge per distinct word in a hash's list, in insertion order), so a walk visits
//! the edges in the reference's order. Hashes are FNV-1a of the folded units, as words.rs computes them.
//! Several matchers (the lexical detectors, the intent topics) read one word stream in one pass. The module
//! holds one matcher per slot (0 the lexical detectors, 1 the intent topics), replaced when the host hands
//! over another.

use crate::words::{fold_unit, Words};
use crate::State;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const FNV_OFFSET: u32 = 0x811c_9dc5;
const PREFIX_LENGTH: usize = 3;
const FILTER_BITS: u32 = 16;
const FILTER_MASK: u32 = (1 << FILTER_BITS) - 1;

/// The keys are FNV-1a hashes already: a multiply spreads them for the table, no second hash needed.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type Table = HashMap<u32, Vec<Edge>, BuildHasherDefault<KeyHasher>>;

struct Edge {
    word: Vec<u16>,
    next: usize,
}

#[derive(Default)]
struct Node {
    exact: Table,
    prefixes: Table,
    tags: Vec<i32>,
}

impl Node {
    fn leaf(&self) -> bool {
        self.exact.is_empty() && self.prefixes.is_empty()
    }
}

fn hash(units: &[u16]) -> u32 {
    units
        .iter()
        .fold(FNV_OFFSET, |h, &c| (h ^ c as u32).wrapping_mul(0x0100_0193))
}

/// One matcher's tries: node 0 the root of whole and prefix terms, node 1 the root of joined forms.
pub(crate) struct Lexicon {
    nodes: Vec<Node>,
    max_words: usize,
    filter: Vec<u32>,
}

const ROOT: usize = 0;
const JOINED: usize = 1;

impl Lexicon {
    /// Reads the terms as `lexicon_set` receives them: per term its word count, 1 when the last word is
    /// a prefix, its tag, then each word as its length and its folded units.
    pub(crate) fn from_terms(t: &[u16]) -> Lexicon {
        let mut lx = Lexicon {
            nodes: vec![Node::default(), Node::default()],
            max_words: 1,
            filter: vec![0; (1 << FILTER_BITS) / 32],
        };
        let mut p = 0;
        while p + 3 <= t.len() {
            let count = t[p] as usize;
            let prefix_last = t[p + 1] != 0;
            let tag = t[p + 2] as i32;
            p += 3;
            let mut words: Vec<&[u16]> = Vec::with_capacity(count);
            for _ in 0..count {
                let len = t[p] as usize;
                words.push(&t[p + 1..p + 1 + len]);
                p += 1 + len;
            }
            lx.add(&words, prefix_last, tag);
        }
        let mut keys: Vec<u32> = lx.nodes[ROOT].exact.keys().copied().collect();
        keys.extend(lx.nodes[ROOT].prefixes.keys().copied());
        for k in keys {
            lx.filter[((k & FILTER_MASK) >> 5) as usize] |= 1 << (k & 31);
        }
        lx
    }

    fn edge_to(&mut self, from: usize, prefix: bool, key: u32, word: &[u16]) -> usize {
        let fresh = self.nodes.len();
        let node = &mut self.nodes[from];
        let table = if prefix {
            &mut node.prefixes
        } else {
            &mut node.exact
        };
        let list = table.entry(key).or_default();
        if let Some(e) = list.iter().find(|e| e.word == word) {
            return e.next;
        }
        list.push(Edge {
            word: word.to_vec(),
            next: fresh,
        });
        self.nodes.push(Node::default());
        fresh
    }

    fn add(&mut self, words: &[&[u16]], prefix_last: bool, tag: i32) {
        self.max_words = self.max_words.max(words.len());
        let mut node = ROOT;
        for (i, w) in words.iter().enumerate() {
            node = if prefix_last && i == words.len() - 1 {
                self.edge_to(node, true, hash(&w[..PREFIX_LENGTH]), w)
            } else {
                self.edge_to(node, false, hash(w), w)
            };
        }
        self.nodes[node].tags.push(tag);
        if words.len() > 1 {
            let one: Vec<u16> = words.concat();
            let leaf = if prefix_last {
                self.edge_to(JOINED, true, hash(&one[..PREFIX_LENGTH]), &one)
            } else {
                self.edge_to(JOINED, false, hash(&one), &one)
            };
            self.nodes[leaf].tags.push(tag);
        }
    }

    #[inline]
    fn in_filter(&self, h: u32) -> bool {
        self.filter[((h & FILTER_MASK) >> 5) as usize] & (1 << (h & 31)) != 0
    }
}

/// What a walk reads: the word stream, the texts it was cut from, and the module's character classes.
struct Reader<'a> {
    s: &'a mut State,
    words: &'a Words,
    texts: &'a [u16],
    bases: &'a [usize],
}

impl Reader<'_> {
    /// Does word `w` fold to `word` - or, with `prefix`, start with it? (words.ts `matches`.)
    fn matches(&mut self, w: usize, word: &[u16], prefix: bool) -> bool {
        let length = self.words.length[w] as usize;
        if if prefix {
            length < word.len()
        } else {
            length != word.len()
        } {
            return false;
        }
        let base = self.bases[self.words.text[w] as usize];
        let flags = self.words.flags[w];
        let (from, to) = (
            base + self.words.start[w] as usize,
            base + self.words.end[w] as usize,
        );
        let mut m = 0;
        for k in from..to {
            if m >= word.len() {
                break;
            }
            let c = fold_unit(self.s, self.texts[k], flags);
            if c >= 0 {
                if c != word[m] as i32 {
                    return false;
                }
                m += 1;
            }
        }
        m == word.len()
    }

    fn record(lx: &Lexicon, node: usize, start: usize, end: usize, out: &mut Vec<i32>) {
        for &tag in &lx.nodes[node].tags {
            out.extend_from_slice(&[tag, start as i32, end as i32]);
        }
    }

    fn walk(&mut self, lx: &Lexicon, node: usize, j: usize, start: usize, out: &mut Vec<i32>) {
        if j >= self.words.count() || j - start >= lx.max_words {
            return;
        }
        let n = &lx.nodes[node];
        if let Some(edges) = n.exact.get(&(self.words.hash[j] as u32)) {
            for e in edges {
                if !self.matches(j, &e.word, false) {
                    continue;
                }
                Self::record(lx, e.next, start, j, out);
                if !lx.nodes[e.next].leaf() {
                    self.walk(lx, e.next, j + 1, start, out);
                }
            }
        }
        if self.words.length[j] as usize >= PREFIX_LENGTH {
            if let Some(edges) = n.prefixes.get(&(self.words.prefix[j] as u32)) {
                for e in edges {
                    if !self.matches(j, &e.word, true) {
                        continue;
                    }
                    Self::record(lx, e.next, start, j, out);
                    if !lx.nodes[e.next].leaf() {
                        self.walk(lx, e.next, j + 1, start, out);
                    }
                }
            }
        }
    }

    /// Word `i` as a first word: a bit, or a lookup or two, rules most words out.
    fn first_word(&mut self, lx: &Lexicon, i: usize, out: &mut Vec<i32>) {
        let h = self.words.hash[i] as u32;
        let p = self.words.prefix[i] as u32;
        let prefix = self.words.length[i] as usize >= PREFIX_LENGTH;
        if !(lx.in_filter(h) || prefix && lx.in_filter(p)) {
            return;
        }
        let root = &lx.nodes[ROOT];
        if root.exact.contains_key(&h) || (prefix && root.prefixes.contains_key(&p)) {
            self.walk(lx, ROOT, i, i, out);
        }
    }
}

/// The hits of the matchers in the slots `read` names (bit k: slot k) over the word stream, into
/// `outs[k]`, in one pass over its words; then the spelled-out words against each one's joined forms, as
/// the reference does after its pass.
pub(crate) fn run(s: &mut State, lexicons: &[Option<Lexicon>], read: u32, outs: &mut [Vec<i32>]) {
    let words = core::mem::take(&mut s.words);
    let texts = core::mem::take(&mut s.word_texts);
    let bases = core::mem::take(&mut s.word_bases);
    {
        let mut r = Reader {
            s,
            words: &words,
            texts: &texts,
            bases: &bases,
        };
        let chosen: Vec<(&Lexicon, usize)> = lexicons
            .iter()
            .enumerate()
            .filter(|&(k, _)| read & (1 << k) != 0)
            .filter_map(|(k, lx)| lx.as_ref().map(|lx| (lx, k)))
            .collect();
        for out in outs.iter_mut() {
            out.clear();
        }
        // One bit table for all of them: most words start no term of any, and are passed over at one look.
        let mut any = vec![0u32; (1 << FILTER_BITS) / 32];
        for &(lx, _) in &chosen {
            for (a, b) in any.iter_mut().zip(&lx.filter) {
                *a |= b;
            }
        }
        let bit = |h: u32| any[((h & FILTER_MASK) >> 5) as usize] & (1 << (h & 31)) != 0;
        let (hash, prefix, length) = (&words.hash, &words.prefix, &words.length);
        for i in 0..words.count() {
            if !(bit(hash[i] as u32)
                || length[i] as usize >= PREFIX_LENGTH && bit(prefix[i] as u32))
            {
                continue;
            }
            for &(lx, k) in &chosen {
                r.first_word(lx, i, &mut outs[k]);
            }
        }
        for &(lx, k) in &chosen {
            if lx.nodes[JOINED].leaf() {
                continue;
            }
            for i in 0..words.count() {
                if words.flags[i] == 2 {
                    r.walk(lx, JOINED, i, i, &mut outs[k]);
                }
            }
        }
    }
    s.words = words;
    s.word_texts = texts;
    s.word_bases = bases;
}
