package changepoint

import (
	"math"
	"slices"
)

// The split step searches windows at several scales: windowLen values
// long, overlapping by half so that every shift lies well inside one,
// then twice as long, and so on up to the whole series or maxWindowLen.
// Short windows keep a shift local, judged against the values around it
// rather than diluted by a larger shift far away; long ones find a small
// shift in much noise, which only many values on each side can tell. The
// energy statistic's pair sums grow with the square of a window, so the
// cap bounds memory (maxWindowLen² values) and keeps the work linear in
// the series' length past it.
const (
	windowLen    = 50
	maxWindowLen = 400
)

// split is the first step: the candidate change points of x, sorted,
// each found significant at maxP inside at least one window.
func split(x []float64, maxP float64) []int {
	var cuts []int
	var buf []float64
	for _, w := range windows(len(x)) {
		var sums pairSums
		sums, buf = newPairSums(x[w[0]:w[1]], buf)
		for _, c := range divide(x[w[0]:w[1]], sums, maxP) {
			cuts = append(cuts, w[0]+c)
		}
	}
	slices.Sort(cuts)
	return slices.Compact(cuts)
}

// windows returns the [start, end) windows over a series of n values at
// every scale: the whole series if it is no longer than the scale's
// length (and then no longer scale), else windows of that length every
// half length, the last one ending at n.
func windows(n int) [][2]int {
	var ws [][2]int
	for length := windowLen; length <= maxWindowLen; length *= 2 {
		if n <= length {
			return append(ws, [2]int{0, n})
		}
		step := length / 2
		for start := 0; start+length < n; start += step {
			ws = append(ws, [2]int{start, start + length})
		}
		ws = append(ws, [2]int{n - length, n})
	}
	return ws
}

// segment is a stretch [start, end) of a window with its most likely cut
// and the energy statistic there.
type segment struct {
	start, end, cut int
	q               float64
}

// divide is E-Divisive means inside one window: the segment whose best
// cut has the largest energy statistic is cut if the t-test between its
// two sides is significant at maxP, and its halves are searched again.
// A segment whose best cut is not significant is left whole.
func divide(x []float64, sums pairSums, maxP float64) []int {
	var open []segment
	add := func(start, end int) {
		if end-start < 2*minSegment {
			return
		}
		cut, q := sums.bestCut(start, end)
		open = append(open, segment{start: start, end: end, cut: cut, q: q})
	}
	add(0, len(x))
	var cuts []int
	for len(open) > 0 {
		i := strongest(open)
		s := open[i]
		open = slices.Delete(open, i, i+1)
		if c := compare(x[s.start:s.cut], x[s.cut:s.end]); c.p > maxP || c.before == c.after {
			continue
		}
		cuts = append(cuts, s.cut)
		add(s.start, s.cut)
		add(s.cut, s.end)
	}
	return cuts
}

// strongest returns the index of the segment with the largest statistic,
// the first of equals.
func strongest(open []segment) int {
	best := 0
	for i, s := range open {
		if s.q > open[best].q {
			best = i
		}
	}
	return best
}

// pairSums holds, for every a <= b in a window, the sum of |x[i]-x[k]|
// over the pairs a <= i < k < b: the three sums the energy statistic of
// a cut is made of each read in constant time.
type pairSums struct {
	stride int
	sum    []float64
}

// newPairSums computes the sums of x in buf, grown if it is too short, and
// returns buf for the next window to reuse.
func newPairSums(x []float64, buf []float64) (pairSums, []float64) {
	n := len(x)
	size := (n + 1) * (n + 1)
	if cap(buf) < size {
		buf = make([]float64, size)
	}
	p := pairSums{stride: n + 1, sum: buf[:size]}
	clear(p.sum)
	// The pairs within [a, b) are those within [a, b-1), those within
	// [a+1, b) (counting the ones within [a+1, b-1) twice) and the pair
	// (a, b-1).
	for length := 2; length <= n; length++ {
		for a := 0; a+length <= n; a++ {
			b := a + length
			p.sum[a*p.stride+b] = p.within(a, b-1) + p.within(a+1, b) - p.within(a+1, b-1) + math.Abs(x[a]-x[b-1])
		}
	}
	return p, buf
}

func (p pairSums) within(a, b int) float64 { return p.sum[a*p.stride+b] }

// energy is the statistic Q of Matteson and James for the samples
// X = x[start:cut] and Y = x[cut:end] (exponent 1):
//
//	Q = nm/(n+m) * (2/(nm) Σ|X-Y| - 2/(n(n-1)) Σ|X-X'| - 2/(m(m-1)) Σ|Y-Y'|)
//
// large when the two samples' distributions differ. A single outlier in
// Y raises the distances between the samples and within Y alike, so it
// barely moves Q.
func (p pairSums) energy(start, cut, end int) float64 {
	n, m := float64(cut-start), float64(end-cut)
	inX, inY := p.within(start, cut), p.within(cut, end)
	between := p.within(start, end) - inX - inY
	e := 2*between/(n*m) - 2*inX/(n*(n-1)) - 2*inY/(m*(m-1))
	return n * m / (n + m) * e
}

// bestCut returns the cut of [start, end) where Q between the two sides
// is largest, and that Q. Both sides hold at least minSegment values.
// Matteson and James also let the second sample end before the segment
// does, which finds the first edge of a shift and its return; the short
// windows find those as well, and over the synthetic series of the tests
// searching that end changed nothing but took up to three times as long.
func (p pairSums) bestCut(start, end int) (cut int, q float64) {
	cut, q = start+minSegment, math.Inf(-1)
	for tau := start + minSegment; tau <= end-minSegment; tau++ {
		if e := p.energy(start, tau, end); e > q {
			cut, q = tau, e
		}
	}
	return cut, q
}
