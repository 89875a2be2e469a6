//! Where src/guard/credentials.ts `findAwsSecrets` may find an AWS secret access key: every run of exactly
//! 40 units of `[A-Za-z0-9/+]` with no such unit or `=` on either side (its `AWS_SECRET` expression, whose
//! lookarounds make a match a whole run), ascending by start. The TypeScript takes the runs inside its
//! windows (after an AWS key id or hint) and checks each as before. search.rs asks where a run may start
//! (a unit outside the run's class and `=`, then one inside it), looking first at the units 39 and 40 on.

#[inline]
fn in_run(c: u16) -> bool {
    matches!(c, 0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a | 0x2b | 0x2f)
}

/// Does a run of the class start at `q` (after a unit outside it and `=`, or at the text's start) and
/// hold exactly 40 units?
#[inline]
pub(crate) fn run40_at(t: &[u16], q: usize) -> bool {
    let n = t.len();
    if n - q < 40 || !in_run(t[q + 39]) {
        return false;
    }
    if q + 40 < n && (in_run(t[q + 40]) || t[q + 40] == 0x3d) {
        return false;
    }
    t[q..q + 39].iter().all(|&c| in_run(c))
}

/// May a run start after unit `c` (a unit outside the class and `=`) at unit `d`?
pub(crate) fn starts_run(c: usize, d: usize) -> bool {
    let inside = |u: usize| u < 128 && in_run(u as u16);
    !inside(c) && c != 0x3d && inside(d)
}

#[derive(Default)]
pub(crate) struct Secret40 {
    found: Vec<i32>,
}

impl Secret40 {
    pub(crate) fn clear(&mut self) {
        self.found.clear();
    }

    /// At `q`, where a run may start.
    #[inline]
    pub(crate) fn check(&mut self, t: &[u16], q: usize) {
        if run40_at(t, q) {
            self.found.push(q as i32);
        }
    }

    pub(crate) fn count(&self) -> usize {
        self.found.len()
    }

    pub(crate) fn found(&self) -> *const i32 {
        self.found.as_ptr()
    }
}
