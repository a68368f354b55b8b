package changepoint

import (
	"math"
	"slices"
)

// change is a candidate change point with its test against the segments
// on either side of it, which end at its neighbouring candidates.
type change struct {
	index int
	comparison
	short bool // a segment beside it holds fewer than minSegment values
}

func (c change) magnitude() float64 { return relativeShift(c.before, c.after) }

// largest is the largest relative shift the segments allow at 95 %
// confidence: the measured shift widened by its reach. A shift is too
// small only when even that is below the bound, so a true shift at the
// bound, measured a little under it by the noise, still counts.
func (c change) largest() float64 {
	if c.before == c.after {
		return 0
	}
	return math.Abs(relativeShift(c.before, c.before+math.Abs(c.after-c.before)+c.reach))
}

// merge is the second step: each candidate is tested against its
// neighbours' segments, and the weakest is dropped, and its neighbours
// tested again, until every one left is significant at opt.MaxPValue and
// shifts the mean by at least opt.MinMagnitude. Dropping one candidate at
// a time matters: two weak candidates around a real shift may each fail
// while either alone, the other gone, would pass.
func merge(x []float64, cuts []int, opt Options) []change {
	changes := make([]change, len(cuts))
	for i, c := range cuts {
		changes[i].index = c
	}
	for i := range changes {
		retest(x, changes, i)
	}
	for {
		w := weakest(changes, opt)
		if w < 0 {
			return changes
		}
		changes = slices.Delete(changes, w, w+1)
		if w > 0 {
			retest(x, changes, w-1)
		}
		if w < len(changes) {
			retest(x, changes, w)
		}
	}
}

// retest compares the segments on either side of changes[i].
func retest(x []float64, changes []change, i int) {
	lo, hi := 0, len(x)
	if i > 0 {
		lo = changes[i-1].index
	}
	if i+1 < len(changes) {
		hi = changes[i+1].index
	}
	c := &changes[i]
	c.comparison = compare(x[lo:c.index], x[c.index:hi])
	c.short = c.index-lo < minSegment || hi-c.index < minSegment
}

// weakest returns the index of the candidate to drop next, or -1 when
// every one stands: first one beside a segment too short to be a level
// (candidates from overlapping windows may lie next to each other), then
// the least significant if it is not significant enough, then the
// smallest shift if even its confidence bound is too small (a shift of
// zero always is, whatever the bounds). Ties go to the first.
func weakest(changes []change, opt Options) int {
	w := -1
	for i, c := range changes {
		if c.short && (w < 0 || c.p > changes[w].p) {
			w = i
		}
	}
	if w >= 0 {
		return w
	}
	for i, c := range changes {
		if c.p > opt.MaxPValue && (w < 0 || c.p > changes[w].p) {
			w = i
		}
	}
	if w >= 0 {
		return w
	}
	for i, c := range changes {
		m := c.largest()
		if (m < opt.MinMagnitude || m == 0) && (w < 0 || m < changes[w].largest()) {
			w = i
		}
	}
	return w
}
