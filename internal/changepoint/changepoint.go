package changepoint

import (
	"math"
)

const (
	// DefaultMaxPValue is the default significance bound of a change
	// point's t-test.
	DefaultMaxPValue = 0.001
	// DefaultMinMagnitude is the default smallest relative shift of the
	// mean reported.
	DefaultMinMagnitude = 0.05

	// minSegment is the fewest values a segment between change points
	// holds. One value alone is an outlier, not a level; two can be told
	// from noise by the t-test when the shift is large.
	minSegment = 2
)

// Options bound which shifts are reported.
type Options struct {
	// MaxPValue is the largest two-sided t-test p a change point may
	// have. Outside (0, 1], or NaN, means DefaultMaxPValue.
	MaxPValue float64
	// MinMagnitude is the smallest relative change of the mean,
	// |after-before|/|before|, a change point may have. Negative or NaN
	// means DefaultMinMagnitude; zero keeps every significant shift.
	MinMagnitude float64
}

// DefaultOptions are the bounds a caller uses unless its user set others.
func DefaultOptions() Options {
	return Options{MaxPValue: DefaultMaxPValue, MinMagnitude: DefaultMinMagnitude}
}

func (o Options) withDefaults() Options {
	if !(o.MaxPValue > 0 && o.MaxPValue <= 1) {
		o.MaxPValue = DefaultMaxPValue
	}
	if !(o.MinMagnitude >= 0) {
		o.MinMagnitude = DefaultMinMagnitude
	}
	return o
}

// Point is one change point: where the series shifted and by how much.
type Point struct {
	// Index is the first index of the new segment: series[Index] is the
	// first value after the shift.
	Index int
	// MeanBefore is the mean of the segment before, from the previous
	// change point (or the series' start) to Index.
	MeanBefore float64
	// MeanAfter is the mean of the segment after, from Index to the next
	// change point (or the series' end).
	MeanAfter float64
	// Magnitude is (MeanAfter-MeanBefore)/|MeanBefore|. A shift away from
	// a zero mean has no relative size; it is then +1 or -1 (the sign of
	// the shift). Always finite.
	Magnitude float64
	// PValue is the two-sided p of Student's t-test between the two
	// segments.
	PValue float64
}

// Detect returns the change points of series, ordered by Index. It is
// deterministic, and never panics: a series shorter than four values or
// holding a NaN or an infinity has none.
func Detect(series []float64, opt Options) []Point {
	opt = opt.withDefaults()
	x, scale, ok := normalized(series)
	if !ok {
		return nil
	}
	changes := merge(x, split(x, firstPassPValue(opt.MaxPValue)), opt)
	if len(changes) == 0 {
		return nil
	}
	points := make([]Point, len(changes))
	for i, c := range changes {
		points[i] = Point{
			Index:      c.index,
			MeanBefore: c.before * scale,
			MeanAfter:  c.after * scale,
			Magnitude:  c.magnitude(),
			PValue:     c.p,
		}
	}
	return points
}

// normalized returns series divided by its largest absolute value, and
// that value. Every statistic here is unchanged by the scale, and values
// within [-1, 1] can be subtracted and squared without overflowing, so a
// series of huge or tiny numbers is read as well as one of ordinary ones.
// ok is false when the series has no change point to find: too short,
// not finite, or all zeros.
func normalized(series []float64) (x []float64, scale float64, ok bool) {
	if len(series) < 2*minSegment {
		return nil, 0, false
	}
	for _, v := range series {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, 0, false
		}
		scale = max(scale, math.Abs(v))
	}
	if scale == 0 {
		return nil, 0, false
	}
	x = make([]float64, len(series))
	for i, v := range series {
		x[i] = v / scale
	}
	return x, scale, true
}

// firstPassPValue is the looser bound the split step keeps candidates
// at: the merge step tests them again at maxP against their final
// neighbours, and a shift that is weak inside one window may be strong
// between the segments that remain.
func firstPassPValue(maxP float64) float64 {
	switch {
	case maxP < 0.05:
		return 10 * maxP
	case maxP < 0.5:
		return 2 * maxP
	}
	return maxP
}
