//! The candidate search of src/guard/laced.ts (`findLaced`): the token starts where a laced secret's prefix
//! may begin (its `ANCHOR` expression) and does begin, read across separators (its `prefixesAt` is not
//! null). The prefixes and the joined lengths they need are handed over by the host (`PREFIXES`); what is
//! done at each candidate (joining, matching the shapes) stays in TypeScript, which reads this list instead
//! of running the expression. The two filters are pure functions of the text and the offset, and the
//! expression's lookbehind puts every match at a token start, so a candidate dropped here changes nothing
//! of the loop that reads the others. search.rs reads every offset once for this and keywords.rs.

const MAX_GROUP: u32 = 4;
use crate::units::at;

#[inline]
pub(crate) fn is_token_code(c: u32) -> bool {
    matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a | 0x2d | 0x5f)
}

#[inline]
fn is_alnum(c: u32) -> bool {
    matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a)
}

/// laced.ts SEPARATOR: space, tab, CR, LF, * ` | > ~ . , ; : " ' / \ + ^ = # ( ) [ ] <
#[inline]
fn is_separator_char(c: u32) -> bool {
    matches!(
        c,
        0x20 | 0x09
            | 0x0d
            | 0x0a
            | 0x2a
            | 0x60
            | 0x7c
            | 0x3e
            | 0x7e
            | 0x2e
            | 0x2c
            | 0x3b
            | 0x3a
            | 0x22
            | 0x27
            | 0x2f
            | 0x5c
            | 0x2b
            | 0x5e
            | 0x3d
            | 0x23
            | 0x28
            | 0x29
            | 0x5b
            | 0x5d
            | 0x3c
    )
}

/// A line break or tab written out at `p`, as both separator readings take it: a literal `\n`, `\r` or `\t`,
/// or a `<br>`, `<br/>` or `<br />` tag (its `br` in any case when `any_case`, as laced.ts separatorAt reads
/// it; lower case only in the ANCHOR expression). Its length, or 0.
fn written_break(t: &[u16], p: usize, any_case: bool) -> usize {
    let c = at(t, p);
    if c == 0x5c {
        let n = at(t, p + 1);
        return if n == 0x6e || n == 0x72 || n == 0x74 {
            2
        } else {
            0
        };
    }
    let fold = if any_case { 0x20 } else { 0 };
    if c == 0x3c && (at(t, p + 1) | fold) == 0x62 && (at(t, p + 2) | fold) == 0x72 {
        let mut q = p + 3;
        if at(t, q) == 0x20 {
            q += 1;
        }
        if at(t, q) == 0x2f {
            q += 1;
        }
        return if at(t, q) == 0x3e { q + 1 - p } else { 0 };
    }
    0
}

/// laced.ts separatorAt: the length of the separator unit at `p`, or 0.
fn separator_at(t: &[u16], p: usize) -> usize {
    // A written line break before the single characters that start one (`\`, `<`).
    let len = written_break(t, p, true);
    if len > 0 {
        return len;
    }
    usize::from(is_separator_char(at(t, p)))
}

/// laced.ts nextPiece: where the next piece starts after the token ending at `p`, or None.
fn next_piece(t: &[u16], p: usize) -> Option<usize> {
    let mut q = p;
    let mut units = 0;
    loop {
        let len = separator_at(t, q);
        if len == 0 || units > MAX_GROUP {
            break;
        }
        q += len;
        units += 1;
    }
    if units == 0 || units > MAX_GROUP || q >= t.len() || !is_token_code(at(t, q)) {
        None
    } else {
        Some(q)
    }
}

/// laced.ts leadInto: the first `max` units the text from `p` reads as across separators (`bare`: without
/// `-` and `_`), into `out`.
fn lead_into(t: &[u16], p: usize, max: usize, bare: bool, out: &mut Vec<u16>) {
    out.clear();
    let n = t.len();
    let mut i = p;
    while out.len() < max && i < n {
        let c = t[i] as u32;
        if is_token_code(c) {
            if !bare || (c != 0x2d && c != 0x5f) {
                out.push(c as u16);
            }
            i += 1;
            continue;
        }
        match next_piece(t, i) {
            Some(q) => i = q,
            None => break,
        }
    }
}

/// One separator unit of the ANCHOR expression (`<br ?\/?>|\\[nrt]|[ \t\r\n*|>~.,;:"'_\x60/\\+^=#()[\]<-]`): its length, or 0.
fn anchor_separator(t: &[u16], p: usize) -> usize {
    let len = written_break(t, p, false);
    if len > 0 {
        return len;
    }
    let c = at(t, p);
    usize::from(is_separator_char(c) || c == 0x5f || c == 0x2d)
}

const LOWER_AWS: [&[u8; 3]; 12] = [
    b"kia", b"sia", b"bia", b"cca", b"gpa", b"ida", b"ipa", b"npa", b"nva", b"pka", b"roa", b"sca",
];

/// Does the ANCHOR expression match at `q`? A token start, then the first two characters of a prefix with at
/// most four separator units between them (no separator unit is a letter, so the greedy reading decides),
/// or a lower-case AWS prefix written whole.
fn anchor_at(t: &[u16], q: usize) -> bool {
    if q > 0 && is_token_code(t[q - 1] as u32) {
        return false;
    }
    let c = t[q] as u32;
    if c == 0x61 {
        // Every lower-case AWS prefix ends in `a`: most words starting with `a` are passed at this look.
        if at(t, q + 3) != 0x61 {
            return false;
        }
        return LOWER_AWS.iter().any(|w| {
            w.iter()
                .enumerate()
                .all(|(k, &b)| at(t, q + 1 + k) == b as u32)
        });
    }
    let second: &[u8] = match c {
        0x73 | 0x72 => b"k",  // s, r
        0x67 => b"hli",       // g
        0x6e => b"p",         // n
        0x78 => b"o",         // x
        0x68 => b"f",         // h
        0x41 => b"IKSBCGNPR", // A
        _ => return false,
    };
    let mut p = q + 1;
    for _ in 0..4 {
        let len = anchor_separator(t, p);
        if len == 0 {
            break;
        }
        p += len;
    }
    let d = at(t, p);
    second.iter().any(|&b| d == b as u32)
}

struct Prefix {
    kept: Vec<u16>,
    bare: Vec<u16>,
    limit: u32,
    upper: bool,
}

#[derive(Default)]
pub(crate) struct Laced {
    /// Per ASCII first unit, the prefixes that start with it, in the host's order.
    by_first: Vec<Vec<Prefix>>,
    /// Per ASCII first unit, the second units of its prefixes (kept and bare readings).
    second: Vec<Vec<u16>>,
    lead: usize,
    kept: Vec<u16>,
    bare: Vec<u16>,
    starts: Vec<i32>,
}

impl Laced {
    /// Takes the prefixes (NUL-separated in `t`) and, per prefix, the joined length it needs.
    pub(crate) fn set(&mut self, t: &[u16], limits: &[u32]) {
        self.by_first = (0..128).map(|_| Vec::new()).collect();
        self.second = vec![Vec::new(); 128];
        self.lead = 0;
        for (x, &limit) in t.split(|&c| c == 0).filter(|w| !w.is_empty()).zip(limits) {
            let first = x[0] as usize;
            if first >= 128 {
                continue; // the host hands over ASCII prefixes only
            }
            let bare: Vec<u16> = x
                .iter()
                .copied()
                .filter(|&c| c != 0x2d && c != 0x5f)
                .collect();
            let upper = x.iter().all(|&c| !(0x61..=0x7a).contains(&c));
            self.lead = self.lead.max(x.len());
            if x.len() > 1 {
                self.second[first].push(x[1]);
            }
            if bare.len() > 1 {
                self.second[first].push(bare[1]);
            }
            self.by_first[first].push(Prefix {
                kept: x.to_vec(),
                bare,
                limit,
                upper,
            });
        }
    }

    /// laced.ts prefixesAt(text, p) !== null.
    fn prefix_at(&mut self, t: &[u16], p: usize) -> bool {
        let c = t[p] as usize;
        if c >= 128 || self.by_first[c].is_empty() {
            return false;
        }
        let second = at(t, p + 1);
        if is_alnum(second) && !self.second[c].iter().any(|&s| s as u32 == second) {
            return false;
        }
        let mut kept = core::mem::take(&mut self.kept);
        let mut bare = core::mem::take(&mut self.bare);
        lead_into(t, p, self.lead, false, &mut kept);
        let mut bare_read = false;
        let mut found = false;
        for x in &self.by_first[c] {
            if !kept.starts_with(&x.kept) {
                if !bare_read {
                    lead_into(t, p, self.lead, true, &mut bare);
                    bare_read = true;
                }
                if !bare.starts_with(&x.bare) {
                    continue;
                }
            }
            if !bare_read {
                lead_into(t, p, self.lead, true, &mut bare);
                bare_read = true;
            }
            if x.limit == 24 && !aws_tail(&bare, 4, x.upper) {
                continue;
            }
            if x.limit > 0 {
                found = true;
                break;
            }
        }
        self.kept = kept;
        self.bare = bare;
        found
    }

    /// Forgets the last search's candidates.
    pub(crate) fn clear(&mut self) {
        self.starts.clear();
    }

    /// At `q` (a token start whose unit is `A` or a lower-case letter, every first character ANCHOR names):
    /// records `q` when it is a candidate.
    #[inline]
    pub(crate) fn check(&mut self, t: &[u16], q: usize) {
        if !self.by_first.is_empty() && anchor_at(t, q) && self.prefix_at(t, q) {
            self.starts.push(q as i32);
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.starts.len()
    }

    pub(crate) fn starts(&self) -> *const u8 {
        self.starts.as_ptr() as *const u8
    }
}

/// laced.ts awsTail: are units[from..] all of an AWS id's alphabet (upper: capitals and digits; else a-z, 2-7)?
fn aws_tail(units: &[u16], from: usize, upper: bool) -> bool {
    units.iter().skip(from).all(|&c| {
        if upper {
            (0x41..=0x5a).contains(&c) || (0x30..=0x39).contains(&c)
        } else {
            (0x61..=0x7a).contains(&c) || (0x32..=0x37).contains(&c)
        }
    })
}
