//! Reading a text's UTF-16 units past its end without a bounds check at every caller: the expressions the
//! crate replaces compare the unit after a run with what may follow it, and past the text nothing may.

/// Past the text: no unit compares equal to it.
const END: u32 = 0x10000;

/// The unit at `i`, or `END` past the text.
#[inline]
pub(crate) fn at(t: &[u16], i: usize) -> u32 {
    if i < t.len() {
        t[i] as u32
    } else {
        END
    }
}
