//! Encoded runs (src/guard/encodings.ts `scanRuns`): where base64, base32 and hex runs and hex byte lists
//! may be, in one pass over the text, each as (kind, start, end). TypeScript decodes them; this is only the
//! per-character work of finding them, unit for unit as the reference does it: stretches where no run can
//! start are skipped (`skip_quiet`), ever less often where skips keep failing, and each run of base64
//! alphabet characters long enough (or starting a byte list) is walked by `scan_run`.

const MIN_BASE64: usize = 24;
const MIN_HEX_DIGITS: usize = 40;
const MIN_HEX_PAIRS: usize = 20;
const MIME_LINE_MIN: usize = 32;
const MIN_LIST_LENGTH: usize = MIN_HEX_PAIRS * 3 - 1;
const MAX_SKIP_BACKOFF: usize = 1024;
const MAX_BASE32: usize = 16 * 1024;

// The kinds, as encodings.ts numbers them.
const HEX_RUN: i32 = 0;
const HEX_LIST: i32 = 1;
const BASE32_RUN: i32 = 2;
const BASE64_RUN: i32 = 3;

// The character classes of encodings.ts CLASS.
const B64: u16 = 1;
const HEX: u16 = 2;
const ESC: u16 = 4;
const ALNUM: u16 = 8;
const UPPER: u16 = 16;
const LOWER: u16 = 32;
const NOT_HEX: u16 = 64;
const IN_RUN: u16 = 128;
const IN_LIST: u16 = 256;
const NOT_B32_UPPER: u16 = 512;
const NOT_B32_LOWER: u16 = 1024;

const fn in_set(c: u8, set: &[u8]) -> bool {
    let mut k = 0;
    while k < set.len() {
        if set[k] == c {
            return true;
        }
        k += 1;
    }
    false
}

const fn class_of(c: u8) -> u16 {
    let upper = c.is_ascii_uppercase();
    let lower = c.is_ascii_lowercase();
    let digit = c.is_ascii_digit();
    let mut k = 0;
    if upper || lower || digit {
        k |= B64 | ESC | ALNUM;
    }
    if c.is_ascii_hexdigit() {
        k |= HEX;
    } else if upper || lower || in_set(c, b"+/_-") {
        k |= NOT_HEX;
    }
    if upper {
        k |= UPPER;
    }
    if lower {
        k |= LOWER;
    }
    if in_set(c, b"+/-_") {
        k |= B64 | ESC;
    }
    if in_set(c, b"=.~:,!*%\\") {
        k |= ESC;
    }
    if k & (B64 | ESC) != 0 || in_set(c, b" \r\n") {
        k |= IN_RUN;
    }
    if c.is_ascii_hexdigit() || in_set(c, b"xX ,:") {
        k |= IN_LIST;
    }
    let b32_digit = c >= b'2' && c <= b'7';
    if !(upper || b32_digit) {
        k |= NOT_B32_UPPER;
    }
    if !(lower || b32_digit) {
        k |= NOT_B32_LOWER;
    }
    k
}

const CLASS: [u16; 128] = {
    let mut t = [0u16; 128];
    let mut c = 0;
    while c < 128 {
        t[c] = class_of(c as u8);
        c += 1;
    }
    t
};

/// Is the unit at `p` (none past the end) of class `flag`?
#[inline]
fn is(t: &[u16], p: usize, flag: u16) -> bool {
    p < t.len() && t[p] < 128 && CLASS[t[p] as usize] & flag != 0
}

/// The unit at `p`, or one no comparison matches past the end (JavaScript's NaN).
#[inline]
fn at(t: &[u16], p: usize) -> u32 {
    if p < t.len() {
        t[p] as u32
    } else {
        u32::MAX
    }
}

/// encodings.ts hexPairsAt: the end of the byte list at `start`, when it has 20 pairs or more.
fn hex_pairs_at(t: &[u16], start: usize) -> Option<usize> {
    let n = t.len();
    let mut pairs = 0;
    let mut last = start;
    let mut p = start;
    loop {
        if p + 1 < n && t[p] == 0x30 && (t[p + 1] | 0x20) == 0x78 {
            p += 2;
        }
        if p + 1 >= n || !is(t, p, HEX) || !is(t, p + 1, HEX) {
            break;
        }
        if p + 2 < n && is(t, p + 2, ALNUM) {
            break;
        }
        pairs += 1;
        last = p + 2;
        let sep = if last < n { t[last] } else { 0 };
        if sep != 0x20 && sep != 0x2c && sep != 0x3a {
            break;
        }
        p = last + 1;
        if sep == 0x2c && p < n && t[p] == 0x20 {
            p += 1;
        }
    }
    (pairs >= MIN_HEX_PAIRS).then_some(last)
}

/// encodings.ts mayStartHexList.
fn may_start_hex_list(t: &[u16], start: usize, end: usize) -> bool {
    let sep = if end < t.len() { t[end] } else { 0 };
    if sep != 0x20 && sep != 0x2c && sep != 0x3a {
        return false;
    }
    let prefixed = end - start == 4 && t[start] == 0x30 && (t[start + 1] | 0x20) == 0x78;
    if end - start != 2 && !prefixed {
        return false;
    }
    is(t, end - 2, HEX) && is(t, end - 1, HEX)
}

fn stretch_start(t: &[u16], from: usize, at: usize, flag: u16) -> usize {
    let mut start = at;
    while start > from && is(t, start - 1, flag) {
        start -= 1;
    }
    start
}

fn stretch_end(t: &[u16], start: usize, at: usize, flag: u16, enough: usize) -> usize {
    let mut end = at + 1;
    while end - start < enough && end < t.len() && is(t, end, flag) {
        end += 1;
    }
    end
}

/// encodings.ts skipQuiet: how far the scan at `i` can skip.
fn skip_quiet(t: &[u16], i: usize, hex: bool) -> usize {
    let last = i + MIN_BASE64 - 1;
    if last >= t.len() {
        return i;
    }
    if hex && is(t, last, IN_LIST) {
        let start = stretch_start(t, i, last, IN_LIST);
        if stretch_end(t, start, last, IN_LIST, MIN_LIST_LENGTH) - start >= MIN_LIST_LENGTH {
            return i;
        }
    }
    if !is(t, last, B64) {
        return last + 1;
    }
    let start = stretch_start(t, i, last, B64);
    let end = stretch_end(t, start, last, B64, MIN_BASE64);
    if end - start < MIN_BASE64 {
        end
    } else {
        start
    }
}

pub(crate) struct Options {
    pub base64: bool,
    pub hex: bool,
    pub base32: bool,
}

/// encodings.ts scanRuns: every run found in `t`, as (kind, start, end) into `out`.
pub(crate) fn run(t: &[u16], o: &Options, out: &mut Vec<i32>) {
    out.clear();
    let n = t.len();
    let mut i = 0;
    let mut next_skip = 0;
    let mut backoff = MIN_BASE64;
    while i < n {
        if i >= next_skip {
            let past = skip_quiet(t, i, o.hex);
            if past > i {
                i = past;
                backoff = MIN_BASE64;
                continue;
            }
            next_skip = i + backoff;
            backoff = (2 * backoff).min(MAX_SKIP_BACKOFF);
        }
        if !is(t, i, B64) {
            i += 1;
            continue;
        }
        let mut end = i + 1;
        while end < n && end - i < MIN_BASE64 && is(t, end, B64) {
            end += 1;
        }
        if end - i < MIN_BASE64 && !(o.hex && may_start_hex_list(t, i, end)) {
            i = end;
        } else {
            i = scan_run(t, i, o, out);
        }
    }
}

/// encodings.ts scanRun: the run of base64 alphabet characters at `start` (with padding and MIME line
/// breaks); reports what it holds and returns where it ends.
fn scan_run(t: &[u16], start: usize, o: &Options, out: &mut Vec<i32>) -> usize {
    let n = t.len();
    let mut found =
        |kind: i32, s: usize, e: usize| out.extend_from_slice(&[kind, s as i32, e as i32]);
    let mut i = start;
    let mut flags = 0u16;
    let mut count = 0usize;
    loop {
        let line_start = i;
        let mut hex_start = i;
        while i < n {
            let c = t[i];
            let k = if c < 128 { CLASS[c as usize] } else { 0 };
            if k & B64 == 0 {
                break;
            }
            flags |= k;
            if k & HEX == 0 {
                if o.hex && i >= hex_start + MIN_HEX_DIGITS {
                    found(HEX_RUN, hex_start, i);
                }
                hex_start = i + 1;
            }
            i += 1;
        }
        if o.hex && i >= hex_start + MIN_HEX_DIGITS {
            found(HEX_RUN, hex_start, i);
        }
        let line = i - line_start;
        count += line;
        if o.hex && (line == 2 || line == 4) && i < n {
            if let Some(end) = hex_pairs_at(t, line_start) {
                found(HEX_LIST, line_start, end);
                i = end;
                count = 0;
                break;
            }
        }
        let mut pad = 0;
        while i < n && pad < 2 && t[i] == 0x3d {
            i += 1;
            pad += 1;
        }
        if pad > 0 || line < MIME_LINE_MIN || i >= n {
            break;
        }
        let mut k = i;
        if t[k] == 0x0d {
            k += 1;
        }
        if at(t, k) != 0x0a || !is(t, k + 1, B64) {
            break;
        }
        i = k + 1;
    }
    if o.base32
        && (32..=MAX_BASE32).contains(&count)
        && i - start - count <= 6
        && ((flags & NOT_B32_UPPER) == 0 || (flags & NOT_B32_LOWER) == 0)
        && base32_like(&t[start..i.min(start + 64)])
    {
        found(BASE32_RUN, start, i);
    }
    if o.base64
        && count >= MIN_BASE64
        && flags & UPPER != 0
        && flags & LOWER != 0
        && flags & NOT_HEX != 0
    {
        found(BASE64_RUN, start, i);
    }
    if i == start {
        i + 1
    } else {
        i
    }
}

/// encodings.ts `base32Like`: the head of a base32 run holds a digit 2-7, or at least 8 distinct letters
/// (the base32 of an AWS key id with no digit holds 10 or more; a run of one letter, or a few, is not base32).
fn base32_like(head: &[u16]) -> bool {
    let mut letters: u32 = 0;
    for &c in head {
        if (0x32..=0x37).contains(&c) {
            return true;
        }
        let u = c & !0x20;
        if (0x41..=0x5a).contains(&u) && (c < 0x80) {
            letters |= 1 << (u - 0x41);
        }
    }
    letters.count_ones() >= 8
}
