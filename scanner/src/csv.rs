//! The lines a credential export is looked for on, for src/guard/credentials.ts `findCredentials`: the
//! lines that hold a hint (the key-like words that name a credential: `hintedLines`, the reference), and
//! of each whether it may be a CSV export's header, i.e. whether `CSV_HEADER_CELL` (the reference, kept
//! there: `csvHeader`) matches it:
//!
//!   `(?:^|[,;\t])[ "]*(?:password|passwd|...|private key)[ "\r]*(?:[,;\t]|$)`, case-insensitive, no `m`.
//!
//! Why reading a line this way equals the expression: a cell starts at the line's start or after a
//! delimiter; `[ "]*` is disjoint from the names' first letters and `[ "\r]*` from the delimiters and the
//! line's end, so only their longest runs can be followed by what comes next, and any name of the
//! alternation that fits there makes a match (the engine backtracks into the alternation). Without the
//! `u` flag, `i` folds ASCII letters only to ASCII letters (no other unit's upper case is taken as an
//! ASCII letter's), so the names are compared with ASCII case folded; and `$` without `m` is the line's
//! end (the host hands the line alone).

/// credentials.ts CSV_HEADER_CELL's names, lower case, in its order.
const NAMES: [&[u8]; 14] = [
    b"password",
    b"passwd",
    b"secret access key",
    b"secret_access_key",
    b"secretaccesskey",
    b"secret key",
    b"secret",
    b"client secret",
    b"client_secret",
    b"api key",
    b"api_key",
    b"token",
    b"access token",
    b"private key",
];

#[inline]
fn delimiter(c: u16) -> bool {
    c == 0x2c || c == 0x3b || c == 0x09
}

/// Whether `name` (lower case ASCII) is at `l[at..]`, ASCII case folded.
fn name_at(l: &[u16], at: usize, name: &[u8]) -> bool {
    at + name.len() <= l.len()
        && name.iter().zip(&l[at..]).all(|(&b, &c)| {
            let c = if (0x41..=0x5a).contains(&c) { c | 0x20 } else { c };
            c == u16::from(b)
        })
}

/// Whether a cell of the line `l` is a secret column's name, as CSV_HEADER_CELL reads the line.
fn header(l: &[u16]) -> bool {
    let n = l.len();
    let mut p = 0;
    loop {
        // A cell starts at `p`: its quotes and spaces, a name, then quotes, spaces and CRs to its end.
        let mut q = p;
        while q < n && (l[q] == 0x20 || l[q] == 0x22) {
            q += 1;
        }
        let fits = |name: &&[u8]| {
            if !name_at(l, q, name) {
                return false;
            }
            let mut r = q + name.len();
            while r < n && (l[r] == 0x20 || l[r] == 0x22 || l[r] == 0x0d) {
                r += 1;
            }
            r == n || delimiter(l[r])
        };
        // Every name starts with `a`, `c`, `p`, `s` or `t`: a cell that does not is passed at one look.
        if q < n && matches!(l[q] | 0x20, 0x61 | 0x63 | 0x70 | 0x73 | 0x74) && NAMES.iter().any(fits) {
            return true;
        }
        // The next cell's start: after the next delimiter.
        match l[p..].iter().position(|&c| delimiter(c)) {
            Some(d) => p += d + 1,
            None => return false,
        }
    }
}

/// The hinted lines of `t` (`hints` ascending), each once, as `hintedLines` finds them: pushed to `out`
/// as (start, 1 when the line may be a CSV header else 0).
pub(crate) fn lines(t: &[u16], hints: &[u32], out: &mut Vec<i32>) {
    out.clear();
    let n = t.len();
    let mut last_end: isize = -1;
    for &h in hints {
        let h = h as usize;
        if (h as isize) < last_end {
            continue;
        }
        // `text.lastIndexOf('\n', h - 1) + 1`: the search starts at h - 1, or at 0 for a hint at 0.
        let from = h.saturating_sub(1).min(n.saturating_sub(1));
        let start = if n == 0 {
            0
        } else {
            t[..=from].iter().rposition(|&c| c == 0x0a).map_or(0, |i| i + 1)
        };
        // `text.indexOf('\n', h)`, or the text's end.
        let end = t[h.min(n)..].iter().position(|&c| c == 0x0a).map_or(n, |i| h + i);
        // The line CSV_HEADER_CELL reads: from its start to the next line break, the one after the hint
        // (none lies in [start, h)), but for a line break at 0 and a hint at 0.
        let line_end = if start <= h {
            end
        } else {
            t[start..].iter().position(|&c| c == 0x0a).map_or(n, |i| start + i)
        };
        out.push(start as i32);
        out.push(i32::from(header(&t[start..line_end])));
        last_end = end as isize;
    }
}
