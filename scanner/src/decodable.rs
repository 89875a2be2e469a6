//! Which of a base64 run's readings encodings.ts would keep (`decodeBase64Run`): the run read at each of
//! its four alignments as Node's base64 decoder reads it (byte by byte, only as far as the question needs), and each decoding asked what `pushDecoded` asks
//! (`bytesToText`: at least 20 bytes, and UTF-8 or holding a printable stretch of 20). Most runs in a
//! request (integrity hashes, images, random tokens) decode to bytes that are neither, so TypeScript then
//! decodes only the alignments that read as something, instead of all four; the answer is a hint about
//! work to skip, never a finding, and the equivalence test holds it to what TypeScript's own decoding says.
//! Hex runs likewise (`decodeHexForwards`: two alignments; commit hashes are most of them in prose).

const MIN_DECODED: usize = 20;

/// Bit `k` (0 to 3): the run read from its `k`-th unit decodes to bytes `pushDecoded` keeps.
/// `COMPRESSED`: the reading from its first unit starts as gzip or zlib data (encodings.ts `inflate` tries it).
pub(crate) const COMPRESSED: i32 = 16;

/// A base64 unit's value (either alphabet), 64 for `=` (where Node's decoder stops), 65 for a unit it skips.
const fn value_of(c: u8) -> u8 {
    match c {
        0x41..=0x5a => c - 0x41,
        0x61..=0x7a => c - 0x61 + 26,
        0x30..=0x39 => c - 0x30 + 52,
        0x2b | 0x2d => 62,
        0x2f | 0x5f => 63,
        0x3d => 64,
        _ => 65,
    }
}

const VALUE: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        t[c] = value_of(c as u8);
        c += 1;
    }
    t
};

#[inline]
fn value(c: u16) -> u8 {
    if c < 128 {
        VALUE[c as usize]
    } else {
        65
    }
}

/// The values of the units `Buffer.from(units, 'base64')` decodes: both alphabets, other units skipped,
/// decoding stops at `=`. The run read from its `k`-th unit is `sextets[k..]` (its first four units are all
/// of the alphabet: a run's lines are 32 units or more).
fn sextets(units: &[u16], out: &mut Vec<u8>) {
    out.clear();
    out.reserve(units.len());
    for &c in units {
        let v = value(c);
        if v == 64 {
            break;
        }
        if v != 65 {
            out.push(v);
        }
    }
}

/// Where a reading's sextets come from: the values gathered apart (a run with line breaks), or the run's
/// own units, each looked up as it is read (a run of the alphabet alone, most of them: nothing is copied).
trait Sextets {
    fn count(&self) -> usize;
    fn get(&self, j: usize) -> u8;
}

impl Sextets for &[u8] {
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn get(&self, j: usize) -> u8 {
        self[j]
    }
}

struct Units<'a>(&'a [u16]);

impl Sextets for Units<'_> {
    fn count(&self) -> usize {
        self.0.len()
    }

    #[inline]
    fn get(&self, j: usize) -> u8 {
        value(self.0[j])
    }
}

/// The bytes the sextets `s` decode to, read one at a time (most readings are decided by a few of them):
/// four sextets make three bytes; a last group of two or three makes one or two, of one none.
struct Bytes<S> {
    s: S,
    len: usize,
}

/// Decoded bytes, read one at a time.
trait Read {
    fn len(&self) -> usize;
    fn at(&self, i: usize) -> u8;
}

impl<S: Sextets> Bytes<S> {
    fn new(s: S) -> Self {
        let n = s.count();
        let len = n / 4 * 3
            + match n % 4 {
                2 => 1,
                3 => 2,
                _ => 0,
            };
        Bytes { s, len }
    }
}

impl<S: Sextets> Read for Bytes<S> {
    fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn at(&self, i: usize) -> u8 {
        let g = i / 3 * 4;
        let s = &self.s;
        match i % 3 {
            0 => (s.get(g) << 2) | (s.get(g + 1) >> 4),
            1 => (s.get(g + 1) << 4) | (s.get(g + 2) >> 2),
            _ => (s.get(g + 2) << 6) | s.get(g + 3),
        }
    }
}

/// encodings.ts `isUtf8`.
fn is_utf8(buf: &impl Read) -> bool {
    let n = buf.len();
    let mut i = 0;
    while i < n {
        let b = buf.at(i);
        if b < 0x80 {
            i += 1;
            continue;
        }
        let (need, min) = match b {
            0xc2..=0xdf => (1, 0x80),
            0xe0..=0xef => (2, 0x800),
            0xf0..=0xf4 => (3, 0x10000),
            _ => return false,
        };
        if i + need >= n {
            return false;
        }
        let mut cp = (b & (0x3f >> need)) as u32;
        for k in 1..=need {
            let c = buf.at(i + k);
            if c & 0xc0 != 0x80 {
                return false;
            }
            cp = (cp << 6) | (c & 0x3f) as u32;
        }
        if cp < min || cp > 0x10ffff || (0xd800..=0xdfff).contains(&cp) {
            return false;
        }
        i += need + 1;
    }
    true
}

#[inline]
fn printable(b: u8) -> bool {
    (0x20..0x7f).contains(&b) || b == 0x09 || b == 0x0a || b == 0x0d
}

/// encodings.ts `hasPrintableRun`.
fn has_printable_run(buf: &impl Read) -> bool {
    let mut at = MIN_DECODED - 1;
    while at < buf.len() {
        if printable(buf.at(at)) {
            let mut start = at;
            while start > at + 1 - MIN_DECODED && printable(buf.at(start - 1)) {
                start -= 1;
            }
            let mut end = at + 1;
            while end - start < MIN_DECODED && end < buf.len() && printable(buf.at(end)) {
                end += 1;
            }
            if end - start >= MIN_DECODED {
                return true;
            }
        }
        at += MIN_DECODED;
    }
    false
}

/// encodings.ts `pushDecoded`: are these bytes kept (`bytesToText` not null)? ASCII is UTF-8.
fn kept(buf: &impl Read) -> bool {
    buf.len() >= MIN_DECODED && (is_utf8(buf) || has_printable_run(buf))
}

/// The readings of the base64 run `run` (its units) that encodings.ts keeps, as bits (above).
pub(crate) fn base64_mask(run: &[u16], scratch: &mut Vec<u8>) -> i32 {
    // Up to the padding, if any (where Node's decoder stops); a run of the alphabet alone up to there is
    // read in place, one with line breaks through its gathered sextets.
    let end = run.iter().position(|&c| c == 0x3d).unwrap_or(run.len());
    if run[..end].iter().all(|&c| value(c) < 64) {
        let units = &run[..end];
        return readings((0..4.min(end)).map(|k| Bytes::new(Units(&units[k..]))));
    }
    sextets(run, scratch);
    let s: &[u8] = scratch;
    readings((0..4.min(s.len())).map(|k| Bytes::new(&s[k..])))
}

/// The bits of `base64_mask` for the readings at alignments 0, 1, ... in turn.
fn readings<R: Read>(alignments: impl Iterator<Item = R>) -> i32 {
    let mut mask = 0;
    for (offset, b) in alignments.enumerate() {
        if kept(&b) {
            mask |= 1 << offset;
        }
        if offset == 0 {
            let gzip = b.len() >= 2 && b.at(0) == 0x1f && b.at(1) == 0x8b;
            let zlib = b.len() > 2
                && (b.at(0) & 0x0f) == 8
                && (((b.at(0) as u32) << 8) | b.at(1) as u32) % 31 == 0;
            if gzip || zlib {
                mask |= COMPRESSED;
            }
        }
    }
    mask
}

/// The bytes of hex digits `d` (all hex digits; an odd last one dropped, as `decodeHexForwards` drops it).
struct Hex<'a> {
    d: &'a [u16],
}

#[inline]
fn nibble(c: u16) -> u8 {
    match c {
        0x30..=0x39 => (c - 0x30) as u8,
        _ => ((c | 0x20) - 0x61 + 10) as u8,
    }
}

impl Read for Hex<'_> {
    fn len(&self) -> usize {
        self.d.len() / 2
    }

    #[inline]
    fn at(&self, i: usize) -> u8 {
        (nibble(self.d[2 * i]) << 4) | nibble(self.d[2 * i + 1])
    }
}

/// The readings of the hex run `digits` that encodings.ts `decodeHexForwards` keeps: bit `k` (0, 1), the
/// digits read from the `k`-th decode to bytes `pushDecoded` keeps. (Whether the run is read turned round
/// is decided in TypeScript from its last eight digits.)
pub(crate) fn hex_mask(digits: &[u16]) -> i32 {
    let mut mask = 0;
    for offset in 0..2.min(digits.len()) {
        if kept(&Hex {
            d: &digits[offset..],
        }) {
            mask |= 1 << offset;
        }
    }
    mask
}
