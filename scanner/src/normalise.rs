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

/// Normalises `t`: -1 when it is plain printable ASCII (its own normal form), -2 when a fold could not be
/// read (the host normalises it), else the length of the normalised text (in `s.norm`).
pub(crate) fn run(s: &mut State, t: &[u16]) -> i32 {
    if t.iter()
        .all(|&c| c == 0x09 || c == 0x0a || c == 0x0d || (0x20..=0x7e).contains(&c))
    {
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
            if (c >= 0x20 && c != 0x7f) || c == 0x09 || c == 0x0a || c == 0x0d {
                out.units.push(c);
                out.starts.push(i as i32);
                out.ends.push(i as i32 + 1);
            }
            i += 1;
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
