//! The AWS secret access key of src/guard/credentials.ts `findAwsSecrets`: 40 units of `[A-Za-z0-9/+]`
//! with upper case, lower case and a digit, in the windows of 552 units after each place that names AWS.
//! The host hands over those places (sorted) and the text; this reads the windows as that function does
//! (one window per run of places that overlap, each unit read once) and hands back where each key starts.
//!
//! The expression there, `(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])` searched globally in the
//! window, with the units just outside the window checked too, matches exactly where a run of the class,
//! as the window cuts it, is 40 units long and neither unit beside it in the text is of the class or `=`:
//! a match can start only where no class unit comes before, and must end where none comes after.

/// credentials.ts AWS_WINDOW plus the key's 40 units.
const WINDOW: usize = 512 + 40;
const LENGTH: usize = 40;

/// The key's class: ASCII letters, digits, `/` and `+`.
#[inline]
fn key_unit(c: u16) -> bool {
    matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a | 0x2b | 0x2f)
}

/// The class or `=` (credentials.ts `isBase64Code`): what may not stand beside a key.
#[inline]
fn beside(t: &[u16], i: usize) -> bool {
    i < t.len() && (key_unit(t[i]) || t[i] == 0x3d)
}

/// Upper case, lower case and a digit, each at least once.
fn mixed(units: &[u16]) -> bool {
    let (mut upper, mut lower, mut digit) = (false, false, false);
    for &c in units {
        match c {
            0x41..=0x5a => upper = true,
            0x61..=0x7a => lower = true,
            0x30..=0x39 => digit = true,
            _ => {}
        }
    }
    upper && lower && digit
}

/// The keys in `t[start, end)`, pushed to `out` by where they start.
fn window(t: &[u16], start: usize, end: usize, out: &mut Vec<i32>) {
    let mut i = start;
    while i < end {
        if !key_unit(t[i]) {
            i += 1;
            continue;
        }
        let r = i;
        while i < end && key_unit(t[i]) {
            i += 1;
        }
        if i - r == LENGTH && !(r > 0 && beside(t, r - 1)) && !beside(t, i) && mixed(&t[r..i]) {
            out.push(r as i32);
        }
    }
}

/// Every key after the places in `context` (ascending), as `findAwsSecrets` reads them: overlapping
/// windows read as one, and a window never reread from before where the previous one ended.
pub(crate) fn secrets(t: &[u16], context: &[u32], out: &mut Vec<i32>) {
    out.clear();
    let n = t.len();
    let mut from = 0;
    let mut k = 0;
    while k < context.len() {
        let c = context[k] as usize;
        let start = from.max(c);
        let mut end = n.min(c + WINDOW);
        k += 1;
        while k < context.len() && context[k] as usize <= end {
            end = n.min(context[k] as usize + WINDOW);
            k += 1;
        }
        if start < end {
            window(t, start, end, out);
        }
        from = end;
    }
}
