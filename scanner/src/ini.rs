//! Whether a text is an INI file for src/guard/credentials.ts `findIniExports`: whether some line of it
//! is a `[section]` line, `\[[A-Za-z0-9 _.:-]{1,64}\][ \t]*\r?$` with the `m` flag (that module's
//! `INI_SECTION`, kept there as the reference; `iniSection`).
//!
//! Why reading each `[` this way equals the expression: the class excludes `]` and `[`, so after a `[`
//! the only way to reach `\]` is the whole run of class units that follows it (greedy, and giving units
//! back leaves a class unit where `]` must be), of 1 to 64 units. After the `]`, `[ \t]*` is disjoint from
//! what may end the line, so only the longest run of blanks can be followed by `$`; and a `$` of the `m`
//! flag (without `u`) holds at the text's end and before `\n`, `\r`, U+2028 and U+2029, so `\r?$` holds
//! exactly where the unit after the blanks is one of those or the text ends (`\r` itself ends a line).

/// The section name's class: ASCII letters and digits, space, `_`, `.`, `:` and `-`.
#[inline]
fn name_unit(c: u16) -> bool {
    matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a | 0x20 | 0x5f | 0x2e | 0x3a | 0x2d)
}

/// Where a line may end for `$` under the `m` flag: `\n`, `\r`, U+2028, U+2029.
#[inline]
fn line_end(c: u16) -> bool {
    matches!(c, 0x0a | 0x0d | 0x2028 | 0x2029)
}

/// The longest a section's name may be.
const NAME: usize = 64;

/// Where the first `[` at or after `from` is (`t.len()` when none is). Most of a text holds no bracket and
/// most texts no section line, so this is nearly all of the reading: eight units a look with WebAssembly's
/// 128-bit instructions (as normalise.rs `plain_ascii`; a unit a look cost what V8's expression did).
#[target_feature(enable = "simd128")]
fn next_bracket(t: &[u16], from: usize) -> usize {
    use core::arch::wasm32::{u16x8_bitmask, u16x8_eq, u16x8_splat, v128, v128_load};
    let n = t.len();
    let mut i = from;
    let bracket = u16x8_splat(0x5b);
    while i + 8 <= n {
        // SAFETY: t[i, i + 8) is in bounds, 16 bytes; v128_load has no alignment requirement.
        let v = unsafe { v128_load(t[i..].as_ptr() as *const v128) };
        let found = u16x8_bitmask(u16x8_eq(v, bracket));
        if found != 0 {
            return i + found.trailing_zeros() as usize;
        }
        i += 8;
    }
    while i < n && t[i] != 0x5b {
        i += 1;
    }
    i
}

/// Whether `t` holds a `[section]` line as `INI_SECTION` reads one.
pub(crate) fn section(t: &[u16]) -> bool {
    let n = t.len();
    let mut i = 0;
    loop {
        i = next_bracket(t, i);
        if i >= n {
            return false;
        }
        // The run of name units after the `[`, read no further than one unit past the longest name.
        let from = i + 1;
        let mut j = from;
        while j < n && j - from <= NAME && name_unit(t[j]) {
            j += 1;
        }
        let run = j - from;
        if (1..=NAME).contains(&run) && j < n && t[j] == 0x5d {
            let mut k = j + 1;
            while k < n && (t[k] == 0x20 || t[k] == 0x09) {
                k += 1;
            }
            if k == n || line_end(t[k]) {
                return true;
            }
        }
        // No `[` lies inside the run read: the next one to try is at `j` or after it.
        i = j.max(i + 1);
    }
}
