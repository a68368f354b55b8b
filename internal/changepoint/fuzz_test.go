package changepoint_test

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/changepoint"
)

// FuzzDetect feeds Detect any series and options: it must not panic, and
// what it returns must keep its promises (ordered, segments of two values
// at least, finite, within the bounds asked, the same on a second call).
func FuzzDetect(f *testing.F) {
	f.Add(encode(1, 1, 1, 1, 2, 2, 2, 2), 0.001, 0.05)
	f.Add(encode(generate(seeded(1), 60, 0.03, level{0, 100}, level{30, 110})...), 0.001, 0.05)
	f.Add(encode(0, 0, 0, 0, 1e-320, 1e-320, 1e-320, 1e-320), 0.5, 0.0)
	f.Add(encode(-1e308, 1e308, -1e308, 1e308, 1e308, 1e308), 1.0, 0.0)
	f.Add(encode(math.NaN(), 1, 2, 3), 0.001, 0.05)
	f.Fuzz(func(t *testing.T, data []byte, maxP, minMagnitude float64) {
		series := decode(data)
		if len(series) > 600 {
			series = series[:600]
		}
		opt := changepoint.Options{MaxPValue: maxP, MinMagnitude: minMagnitude}
		kept := slices.Clone(series)
		got := changepoint.Detect(series, opt)
		if !slices.Equal(kept, series) && !slices.ContainsFunc(kept, math.IsNaN) {
			t.Fatal("Detect changed its input")
		}
		if again := changepoint.Detect(series, opt); !slices.Equal(again, got) {
			t.Fatalf("Detect = %+v, then %+v", got, again)
		}
		if !(maxP > 0 && maxP <= 1) {
			maxP = changepoint.DefaultMaxPValue
		}
		if !(minMagnitude >= 0) {
			minMagnitude = changepoint.DefaultMinMagnitude
		}
		prev := 0
		for _, p := range got {
			if p.Index-prev < 2 || len(series)-p.Index < 2 {
				t.Fatalf("Detect = %+v: index %d out of order, or leaves a segment of one value", got, p.Index)
			}
			prev = p.Index
			for _, v := range []float64{p.MeanBefore, p.MeanAfter, p.Magnitude, p.PValue} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("Detect = %+v: not finite", got)
				}
			}
			if p.PValue < 0 || p.PValue > maxP || math.Abs(p.Magnitude) < minMagnitude {
				t.Fatalf("Detect = %+v: outside the bounds %v, %v", got, maxP, minMagnitude)
			}
		}
	})
}

func encode(xs ...float64) []byte {
	b := make([]byte, 0, 8*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func decode(b []byte) []float64 {
	xs := make([]float64, 0, len(b)/8)
	for ; len(b) >= 8; b = b[8:] {
		xs = append(xs, math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	return xs
}
