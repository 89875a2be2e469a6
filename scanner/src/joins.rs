//! Where src/guard/joins.ts reads a key split by the syntax around it: the matches of its `JOIN`
//! expression, as the global search finds them (leftmost, each search resuming at the end of the last
//! match), and whether its `QUICK` expression matches anywhere (without it, joins.ts reads no join at all).
//! What is done with them (which joins have key characters on both sides, the view built around them)
//! stays in TypeScript, which reads these spans instead of running the expressions. search.rs calls
//! `check` at every offset whose unit starts either expression (a quote, backtick, `$`, `\` or `^`), in
//! its one reading of the text; search.rs `joins_only` calls it at the same offsets of a text the search
//! does not read (the boundary pass's joined request, whose search is stitched from its texts' own).
//!
//! Each alternative of `JOIN` is read here as the backtracking engine reads it: its character classes are
//! disjoint from what follows each quantifier, so the greedy reading is the only one that can match, and a
//! run longer than a quantifier's bound fails the alternative (the unit after the bound is one more of the
//! run, which nothing after it accepts). The alternatives are tried in the expression's order.

use crate::units::at;

#[inline]
fn quote(c: u32) -> bool {
    c == 0x22 || c == 0x27 || c == 0x60
}

/// The run of spaces and tabs at `i`, when it is at most `max` units long.
#[inline]
fn spaces(t: &[u16], i: usize, max: usize) -> Option<usize> {
    let mut n = 0;
    while n <= max && matches!(at(t, i + n), 0x20 | 0x09) {
        n += 1;
    }
    (n <= max).then_some(n)
}

/// `\r?\n` at `i`: its length, or 0.
#[inline]
fn newline(t: &[u16], i: usize) -> usize {
    match at(t, i) {
        0x0a => 1,
        0x0d if at(t, i + 1) == 0x0a => 2,
        _ => 0,
    }
}

/// `(?:\r?\n[ \t]{0,32})?` at `i`: where it ends, or None when its indentation runs past 32 units (what
/// follows it in `JOIN` is never a space).
#[inline]
fn optional_break(t: &[u16], i: usize) -> Option<usize> {
    let nl = newline(t, i);
    if nl == 0 {
        return Some(i);
    }
    spaces(t, i + nl, 32).map(|s| i + nl + s)
}

/// `["'`][ \t]{0,8}(?:\r?\n[ \t]{0,32})?(?:\+\+?|\.\.?|\|\||&|<>|~)[ \t]{0,8}(?:\r?\n[ \t]{0,32})?["'`]`
fn operator_join(t: &[u16], p: usize) -> Option<usize> {
    let mut i = p + 1;
    i += spaces(t, i, 8)?;
    i = optional_break(t, i)?;
    i += match at(t, i) {
        0x2b => 1 + usize::from(at(t, i + 1) == 0x2b),
        0x2e => 1 + usize::from(at(t, i + 1) == 0x2e),
        0x7c if at(t, i + 1) == 0x7c => 2,
        0x26 | 0x7e => 1,
        0x3c if at(t, i + 1) == 0x3e => 2,
        _ => return None,
    };
    i += spaces(t, i, 8)?;
    i = optional_break(t, i)?;
    quote(at(t, i)).then_some(i + 1)
}

/// `["'`]\)?\.concat\([ \t]{0,4}["'`]`
fn concat_join(t: &[u16], p: usize) -> Option<usize> {
    let mut i = p + 1;
    if at(t, i) == 0x29 {
        i += 1;
    }
    for &b in b".concat(" {
        if at(t, i) != b as u32 {
            return None;
        }
        i += 1;
    }
    i += spaces(t, i, 4)?;
    quote(at(t, i)).then_some(i + 1)
}

/// `["'][ \t]{0,8}\\?\r?\n[ \t]{0,32}["']` (the backslash: C's adjacent literals in a macro continued over
/// lines; a backslash not followed by a line break fails the alternative, as the expression's would)
fn line_join(t: &[u16], p: usize) -> Option<usize> {
    if at(t, p) == 0x60 {
        return None;
    }
    let mut i = p + 1;
    i += spaces(t, i, 8)?;
    if at(t, i) == 0x5c {
        i += 1;
    }
    let nl = newline(t, i);
    if nl == 0 {
        return None;
    }
    i += nl;
    i += spaces(t, i, 32)?;
    matches!(at(t, i), 0x22 | 0x27).then_some(i + 1)
}

/// `"[ \t]{1,4}"`
fn adjacent_join(t: &[u16], p: usize) -> Option<usize> {
    if at(t, p) != 0x22 {
        return None;
    }
    let s = spaces(t, p + 1, 4)?;
    (s > 0 && at(t, p + 1 + s) == 0x22).then_some(p + 2 + s)
}

/// `\$\{[ \t]{0,4}(?:""|''|``)?[ \t]{0,4}\}`, then `\$\{[ \t]{0,4}["'`]`, then `\$\{[^{}"'`\r\n]{1,24}\}`.
fn template_join(t: &[u16], p: usize) -> Option<usize> {
    let i = p + 2;
    // The two runs of spaces side by side read as one of up to eight; the empty literal only after four or
    // fewer.
    if let Some(s) = spaces(t, i, 8) {
        let j = i + s;
        let c = at(t, j);
        if s <= 4 && quote(c) && at(t, j + 1) == c {
            if let Some(s2) = spaces(t, j + 2, 4) {
                if at(t, j + 2 + s2) == 0x7d {
                    return Some(j + 3 + s2);
                }
            }
        } else if c == 0x7d {
            return Some(j + 1);
        }
        if s <= 4 && quote(c) {
            return Some(j + 1);
        }
    }
    let mut r = 0;
    while r <= 24
        && i + r < t.len()
        && !matches!(t[i + r], 0x7b | 0x7d | 0x22 | 0x27 | 0x60 | 0x0d | 0x0a)
    {
        r += 1;
    }
    ((1..=24).contains(&r) && at(t, i + r) == 0x7d).then_some(i + r + 1)
}

/// `["'`][ \t]{0,4}\}`
fn closing_join(t: &[u16], p: usize) -> Option<usize> {
    let s = spaces(t, p + 1, 4)?;
    (at(t, p + 1 + s) == 0x7d).then_some(p + 2 + s)
}

/// `[\\^]\r?\n[ \t]{0,32}`
fn continuation_join(t: &[u16], p: usize) -> Option<usize> {
    let nl = newline(t, p + 1);
    if nl == 0 {
        return None;
    }
    let i = p + 1 + nl;
    let mut s = 0;
    while s < 32 && matches!(at(t, i + s), 0x20 | 0x09) {
        s += 1;
    }
    Some(i + s)
}

/// Where `JOIN` matches at `p` ends, if it does.
fn join_at(t: &[u16], p: usize) -> Option<usize> {
    match at(t, p) {
        0x22 | 0x27 | 0x60 => operator_join(t, p)
            .or_else(|| concat_join(t, p))
            .or_else(|| line_join(t, p))
            .or_else(|| adjacent_join(t, p))
            .or_else(|| closing_join(t, p)),
        0x24 if at(t, p + 1) == 0x7b => template_join(t, p),
        0x5c | 0x5e => continuation_join(t, p),
        _ => None,
    }
}

/// Does `QUICK` (`["'`][ \t]{0,8}[-+.|&<~\r\n)]|"[ \t]{1,4}"|\$\{|[\\^]\r?\n`) match at `p`?
fn quick_at(t: &[u16], p: usize) -> bool {
    match at(t, p) {
        0x22 | 0x27 | 0x60 => {
            let after = spaces(t, p + 1, 8).is_some_and(|s| {
                matches!(
                    at(t, p + 1 + s),
                    0x2d | 0x2b | 0x2e | 0x7c | 0x26 | 0x3c | 0x7e | 0x0d | 0x0a | 0x29
                )
            });
            after || adjacent_join(t, p).is_some()
        }
        0x24 => at(t, p + 1) == 0x7b,
        0x5c | 0x5e => newline(t, p + 1) > 0,
        _ => false,
    }
}

#[derive(Default)]
pub(crate) struct Joins {
    /// (start, end) of each match, in order.
    found: Vec<i32>,
    /// Where the global search resumes: the end of the last match.
    next: usize,
    quick: bool,
}

impl Joins {
    pub(crate) fn clear(&mut self) {
        self.found.clear();
        self.next = 0;
        self.quick = false;
    }

    /// At `p`, whose unit starts one of the expressions.
    #[inline]
    pub(crate) fn check(&mut self, t: &[u16], p: usize) {
        if !self.quick {
            self.quick = quick_at(t, p);
        }
        if p < self.next {
            return;
        }
        if let Some(end) = join_at(t, p) {
            self.found.push(p as i32);
            self.found.push(end as i32);
            self.next = end;
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.found.len()
    }

    pub(crate) fn found(&self) -> *const i32 {
        self.found.as_ptr()
    }

    pub(crate) fn quick(&self) -> bool {
        self.quick
    }
}

/// Which of the eight units at `t[i..]` start `JOIN` or `QUICK` (a quote, backtick, `$`, `\\` or `^`), as
/// bits, lowest first: one look with WebAssembly's 128-bit instructions (as ini.rs).
#[target_feature(enable = "simd128")]
pub(crate) fn starts8(t: &[u16], i: usize) -> u32 {
    use core::arch::wasm32::{u16x8_bitmask, u16x8_eq, u16x8_splat, v128, v128_load, v128_or};
    let c = &t[i..i + 8];
    // SAFETY: `c` is eight u16 units, 16 bytes; v128_load has no alignment requirement.
    let v = unsafe { v128_load(c.as_ptr() as *const v128) };
    let quotes = v128_or(
        v128_or(u16x8_eq(v, u16x8_splat(0x22)), u16x8_eq(v, u16x8_splat(0x27))),
        u16x8_eq(v, u16x8_splat(0x60)),
    );
    let others = v128_or(
        v128_or(u16x8_eq(v, u16x8_splat(0x24)), u16x8_eq(v, u16x8_splat(0x5c))),
        u16x8_eq(v, u16x8_splat(0x5e)),
    );
    u32::from(u16x8_bitmask(v128_or(quotes, others)))
}

/// Whether the unit starts `JOIN` or `QUICK` (what `starts8` looks for, a unit at a time).
#[inline]
pub(crate) fn starts(c: u16) -> bool {
    matches!(c, 0x22 | 0x27 | 0x60 | 0x24 | 0x5c | 0x5e)
}
