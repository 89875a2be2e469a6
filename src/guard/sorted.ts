/**
 * Index of the last entry of ascending `xs` that is at most `x`, or -1 when every entry is greater. Offsets of
 * joined texts, stretches of a joined view and starts of findings are all ascending arrays asked this one
 * question, each many times per request, so it is one binary search rather than a scan.
 */
export function lastAtOrBefore(xs: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
