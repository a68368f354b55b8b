// Package changepoint finds the points where a series of measurements
// shifted: E-Divisive means with a two-sample t-test for significance,
// the deterministic variant DataStax's Hunter uses.
//
// Why this and not a fixed percentage against a recent baseline: such
// alerting fires on noise and misses a slow drift (Mozilla measured one
// alert group in eight to be a false positive). MongoDB
// moved its performance CI to E-Divisive means change point detection,
// and Hunter made it deterministic by replacing the permutation test with
// a t-test, so the same history always gives the same answer; a service
// that fires a webhook once per new change point needs exactly that.
//
// The method, in two steps:
//
//   - Split. The series is searched in overlapping windows: short ones,
//     where a shift is judged against the values around it, and longer
//     ones (up to 400 values, or the whole series if shorter), where a
//     small shift in much noise shows.
//     In each, the energy statistic (the divergence of the two sides'
//     distributions, which a single outlier barely moves) picks the most
//     likely cut of a segment; a Student's t-test between the segment's two
//     sides says whether it stays, at a looser first-pass level. A kept cut
//     splits the segment and each half is searched again. The union over
//     windows is the list of candidates.
//   - Merge. Every candidate is tested against its neighbouring
//     candidates only; the weakest (one beside a segment of a single
//     value, else the highest p above the bound, else the smallest
//     relative shift below the bound) is dropped and its
//     neighbours are tested again, until every survivor is significant
//     and large enough.
//
// A shift's measured size scatters around its true one by the noise: a
// true 5 % step is measured below 5 % about half the time. So a change
// point is dropped as too small only when the upper end of its shift's
// one-sided 95 % confidence interval is below MinMagnitude as well:
// shifts that are certainly smaller than the bound go, a shift at the
// bound measured a little under it stays. (Hunter compares the measured
// shift alone, and so misses half the shifts of exactly its bound.)
//
// The package is pure: a slice of numbers in, change points out, no
// randomness and no state. What a series is (a template's metric over its
// jobs) is the caller's.
package changepoint
