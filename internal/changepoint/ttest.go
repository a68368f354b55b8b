package changepoint

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// comparison is Student's two-sample t-test between the values before
// and after a cut.
type comparison struct {
	before, after float64 // the means
	p             float64 // two-sided
	// reach is how far the shift after-before may be from its measured
	// value: the half-width of its one-sided 95 % confidence bound (0
	// when the test could not be made).
	reach float64
}

// compare tests whether before and after have the same mean, assuming
// equal variances (Student's test, as Hunter uses: between change points
// a series' noise is the same process).
func compare(before, after []float64) comparison {
	m1, ss1 := meanAndSquares(before)
	m2, ss2 := meanAndSquares(after)
	c := comparison{before: m1, after: m2, p: 1}
	df := float64(len(before) + len(after) - 2)
	if len(before) == 0 || len(after) == 0 || df < 1 || m1 == m2 {
		return c
	}
	ss := ss1 + ss2
	if ss == 0 {
		// Both sides constant, at different levels: no noise could
		// have made that.
		c.p = 0
		return c
	}
	se := math.Sqrt(ss / df * (1/float64(len(before)) + 1/float64(len(after))))
	t := math.Abs(m2-m1) / se
	if math.IsNaN(t) {
		return c
	}
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	if p := 2 * dist.Survival(t); p >= 0 && p <= 1 {
		c.p = p
	}
	if r := dist.Quantile(0.95) * se; r >= 0 && !math.IsInf(r, 0) {
		c.reach = r
	}
	return c
}

// meanAndSquares returns the mean of xs and the sum of squared
// deviations from it. Both are summed as offsets from the first value, so
// a constant run has exactly its value as mean and exactly zero spread,
// and values close together keep their digits.
func meanAndSquares(xs []float64) (mean, squares float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	origin := xs[0]
	var sum float64
	for _, v := range xs {
		sum += v - origin
	}
	offset := sum / float64(len(xs))
	for _, v := range xs {
		d := v - origin - offset
		squares += d * d
	}
	return origin + offset, squares
}

// relativeShift is (after-before)/|before|, finite always.
func relativeShift(before, after float64) float64 {
	switch {
	case after == before:
		return 0
	case before == 0:
		return math.Copysign(1, after-before)
	}
	m := (after - before) / math.Abs(before)
	if math.IsInf(m, 0) {
		return math.Copysign(math.MaxFloat64, m)
	}
	return m
}
