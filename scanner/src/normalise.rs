//! The canonical form of src/guard/normalise.ts (`normalise`), with its map back to the original: ASCII
//! controls other than tab and line breaks dropped, every other non-ASCII code point replaced by its fold.
//! The folds themselves (NFKC, marks stripped, look-alikes, invisibles removed) are the host's
//! (`foldCodePoint`, asked once per code point and remembered here), so both scanners fold alike.

use crate::State;
use std::collections::HashMap;

/// A fold too long for the fold buffer (the host says so with this length): the host normalises the text.
const TOO_LONG: u32 = u32::MAX;
const ASTRAL_CACHE_MAX: usize = 65_536;
const UNKNOWN: u32 = u32::MAX;

#[derive(Default)]
pub(crate) struct FoldCache {
    /// Per BMP code point: offset << 8 | length in `pool`, or UNKNOWN.
    bmp: Vec<u32>,
    astral: HashMap<u32, u32>,
    pool: Vec<u16>,
}

#[derive(Default)]
pub(crate) struct Normalised {
    units: Vec<u16>,
    starts: Vec<i32>,
    ends: Vec<i32>,
}

impl Normalised {
    pub(crate) fn column(&self, column: u32) -> *const u8 {
        match column {
            0 => self.units.as_ptr() as *const u8,
            1 => self.starts.as_ptr() as *const u8,
            _ => self.ends.as_ptr() as *const u8,
        }
    }
}

/// The fold of `cp` as (offset, length) in the pool and whether it stays there (a fold the full astral
/// cache does not keep is the pool's tail, for the caller to drop), or None when the host could not hand it
/// over.
fn fold_of(s: &mut State, cp: u32) -> Option<(usize, usize, bool)> {
    if s.folds.bmp.is_empty() {
        s.folds.bmp = vec![UNKNOWN; 65536];
    }
    let cached = if cp < 0x10000 {
        s.folds.bmp[cp as usize]
    } else {
        s.folds.astral.get(&cp).copied().unwrap_or(UNKNOWN)
    };
    if cached != UNKNOWN {
        return Some(((cached >> 8) as usize, (cached & 0xff) as usize, true));
    }
    // SAFETY: the host writes at most the fold buffer's length into it and touches nothing else here.
    let len = unsafe { crate::fold(cp) };
    if len == TOO_LONG || len as usize > s.fold_buffer.len() || len > 0xff {
        return None;
    }
    let off = s.folds.pool.len();
    let len = len as usize;
    s.folds.pool.extend_from_slice(&s.fold_buffer[..len]);
    let entry = ((off as u32) << 8) | len as u32;
    if cp < 0x10000 {
        s.folds.bmp[cp as usize] = entry;
    } else if s.folds.astral.len() < ASTRAL_CACHE_MAX {
        s.folds.astral.insert(cp, entry);
    } else {
        return Some((off, len, false));
    }
    Some((off, len, true))
}

/// Is every unit of `t` a tab, a line break or printable ASCII? The host asks this of every text it
/// normalises (most are plain ASCII), so it is read eight units at a time with WebAssembly's 128-bit
/// instructions (every Node the gateway supports has them): a unit per look cost as much as V8's expression.
/// (A WebAssembly target feature is safe to call: a host without it refuses the module when it loads.)
#[target_feature(enable = "simd128")]
fn plain_ascii(t: &[u16]) -> bool {
    use core::arch::wasm32::{
        u16x8_all_true, u16x8_eq, u16x8_lt, u16x8_splat, u16x8_sub, v128, v128_load, v128_or,
    };
    let plain = |c: u16| c.wrapping_sub(0x20) < 0x5f || c == 0x09 || c == 0x0a || c == 0x0d;
    let mut chunks = t.chunks_exact(8);
    for c in &mut chunks {
        // SAFETY: `c` is eight u16 units, 16 bytes; v128_load has no alignment requirement.
        let v = unsafe { v128_load(c.as_ptr() as *const v128) };
        let printable = u16x8_lt(u16x8_sub(v, u16x8_splat(0x20)), u16x8_splat(0x5f));
        if !u16x8_all_true(printable) {
            let breaks = v128_or(
                v128_or(
                    u16x8_eq(v, u16x8_splat(0x09)),
                    u16x8_eq(v, u16x8_splat(0x0a)),
                ),
                u16x8_eq(v, u16x8_splat(0x0d)),
            );
            if !u16x8_all_true(v128_or(printable, breaks)) {
                return false;
            }
        }
    }
    chunks.remainder().iter().all(|&c| plain(c))
}

/// Where the run of tabs, line breaks and printable ASCII units from `i` ends (eight units a look, as
/// `plain_ascii`).
#[target_feature(enable = "simd128")]
fn plain_run_end(t: &[u16], mut i: usize) -> usize {
    use core::arch::wasm32::{
        u16x8_bitmask, u16x8_eq, u16x8_lt, u16x8_splat, u16x8_sub, v128, v128_load, v128_or,
    };
    while i + 8 <= t.len() {
        // SAFETY: `t[i..i + 8]` is eight u16 units, 16 bytes; v128_load has no alignment requirement.
        let v = unsafe { v128_load(t[i..i + 8].as_ptr() as *const v128) };
        let printable = u16x8_lt(u16x8_sub(v, u16x8_splat(0x20)), u16x8_splat(0x5f));
        let breaks = v128_or(
            v128_or(
                u16x8_eq(v, u16x8_splat(0x09)),
                u16x8_eq(v, u16x8_splat(0x0a)),
            ),
            u16x8_eq(v, u16x8_splat(0x0d)),
        );
        let other = !u32::from(u16x8_bitmask(v128_or(printable, breaks))) & 0xff;
        if other != 0 {
            return i + other.trailing_zeros() as usize;
        }
        i += 8;
    }
    while i < t.len() {
        let c = t[i];
        if !(c.wrapping_sub(0x20) < 0x5f || c == 0x09 || c == 0x0a || c == 0x0d) {
            break;
        }
        i += 1;
    }
    i
}

/// Appends `t[from..to]` (units that are their own normal form) to `out`, each mapped to its own place.
#[target_feature(enable = "simd128")]
fn copy_plain(out: &mut Normalised, t: &[u16], from: usize, to: usize) {
    out.units.extend_from_slice(&t[from..to]);
    out.starts.extend(from as i32..to as i32);
    out.ends.extend(from as i32 + 1..to as i32 + 1);
}

/// Normalises `t`: -1 when it is plain printable ASCII (its own normal form), -2 when a fold could not be
/// read (the host normalises it), else the length of the normalised text (in `s.norm`).
pub(crate) fn run(s: &mut State, t: &[u16]) -> i32 {
    if plain_ascii(t) {
        return -1;
    }
    let mut out = core::mem::take(&mut s.norm);
    out.units.clear();
    out.starts.clear();
    out.ends.clear();
    let n = t.len();
    let mut i = 0usize;
    let mut ok = true;
    while i < n {
        let c = t[i];
        if c < 0x80 {
            // A run of units that are their own normal form (most of a text that is not plain ASCII is),
            // copied whole, each mapped to itself; a unit dropped (another ASCII control) ends it.
            let end = plain_run_end(t, i);
            if end > i {
                copy_plain(&mut out, t, i, end);
                i = end;
            } else {
                i += 1;
            }
            continue;
        }
        let mut cp = c as u32;
        if (0xd800..=0xdbff).contains(&c) && i + 1 < n && (0xdc00..=0xdfff).contains(&t[i + 1]) {
            cp = 0x10000 + (((c as u32) - 0xd800) << 10) + ((t[i + 1] as u32) - 0xdc00);
        }
        let width = if cp > 0xffff { 2 } else { 1 };
        let Some((off, len, kept)) = fold_of(s, cp) else {
            ok = false;
            break;
        };
        for k in 0..len {
            out.units.push(s.folds.pool[off + k]);
            out.starts.push(i as i32);
            out.ends.push((i + width) as i32);
        }
        if !kept {
            s.folds.pool.truncate(off);
        }
        i += width;
    }
    let length = out.units.len() as i32;
    s.norm = out;
    if ok {
        length
    } else {
        -2
    }
}
