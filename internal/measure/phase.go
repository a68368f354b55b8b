package measure

import (
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to one hour at 3 significant digits, ~190 KB each.
const (
	histLowest  = 1
	histHighest = 3_600_000_000 // one hour in µs
	histDigits  = 3
)

func NewPhase() Phase {
	return Phase{Hist: hdrhistogram.New(histLowest, histHighest, histDigits)}
}

// Record adds one value in µs; negative values count as 0. Values past the
// histogram's range are kept exactly in Min/Max/Sum and clamped in Hist.
func (ph *Phase) Record(v int64) {
	if v < 0 {
		v = 0
	}
	if ph.Count == 0 || v < ph.Min {
		ph.Min = v
	}
	if v > ph.Max {
		ph.Max = v
	}
	ph.Count++
	ph.Sum += v
	ph.SumSq += float64(v) * float64(v)
	if ph.Hist != nil {
		_ = ph.Hist.RecordValue(min(v, histHighest)) // in range by the clamp
	}
}

// Mean is the exact mean in µs; 0 for an empty phase.
func (ph *Phase) Mean() float64 {
	if ph.Count == 0 {
		return 0
	}
	return float64(ph.Sum) / float64(ph.Count)
}

// StdDev is the sample standard deviation in µs (n-1 in the denominator, as
// ab); 0 with fewer than two values.
func (ph *Phase) StdDev() float64 {
	if ph.Count < 2 {
		return 0
	}
	n := float64(ph.Count)
	mean := float64(ph.Sum) / n
	v := (ph.SumSq - n*mean*mean) / (n - 1)
	if v <= 0 { // rounding of equal values
		return 0
	}
	return math.Sqrt(v)
}

// Quantile returns the value in µs below which the fraction q (0..1) of the
// values lie, from Hist, so within 0.1% of the exact value; clamped to
// [Min, Max]. q is a fraction, not a percentage: the median is Quantile(0.5).
func (ph *Phase) Quantile(q float64) int64 {
	if ph.Count == 0 || ph.Hist == nil {
		return 0
	}
	q = math.Max(0, math.Min(1, q))
	v := ph.Hist.ValueAtQuantile(q * 100)
	return max(ph.Min, min(ph.Max, v))
}

// Merge adds o's values to ph exactly: counts, sums, extremes and histogram.
func (ph *Phase) Merge(o *Phase) {
	if o == nil || o.Count == 0 {
		return
	}
	if ph.Count == 0 || o.Min < ph.Min {
		ph.Min = o.Min
	}
	if o.Max > ph.Max {
		ph.Max = o.Max
	}
	ph.Count += o.Count
	ph.Sum += o.Sum
	ph.SumSq += o.SumSq
	switch {
	case o.Hist == nil:
	case ph.Hist == nil:
		ph.Hist = hdrhistogram.Import(o.Hist.Export())
	default:
		ph.Hist.Merge(o.Hist)
	}
}
