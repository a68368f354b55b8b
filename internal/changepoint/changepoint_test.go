package changepoint_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/changepoint"
)

// level is where a generated series' mean becomes mean.
type level struct {
	from int
	mean float64
}

// generate returns n values whose mean follows levels (the first must
// start at 0), each with normal noise of cv times its mean.
func generate(r *rand.Rand, n int, cv float64, levels ...level) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		mean := levels[0].mean
		for _, l := range levels {
			if i >= l.from {
				mean = l.mean
			}
		}
		xs[i] = mean * (1 + cv*r.NormFloat64())
	}
	return xs
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

func indexes(points []changepoint.Point) []int {
	var is []int
	for _, p := range points {
		is = append(is, p.Index)
	}
	return is
}

// near reports whether got and want have the same length and each index
// lies within tolerance of the wanted one.
func near(got, want []int, tolerance int) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if d := got[i] - want[i]; d < -tolerance || d > tolerance {
			return false
		}
	}
	return true
}

func TestDetectNone(t *testing.T) {
	tests := []struct {
		name   string
		series []float64
	}{
		{"nil", nil},
		{"empty", []float64{}},
		{"one", []float64{1}},
		{"three", []float64{1, 1, 100}},
		{"NaN", append(generate(seeded(1), 30, 0, level{0, 100}), math.NaN(), 200, 200, 200, 200, 200)},
		{"+Inf", []float64{1, 1, 1, 1, math.Inf(1), 5, 5, 5, 5}},
		{"-Inf", []float64{math.Inf(-1), 1, 1, 1, 5, 5, 5, 5}},
		{"constant", generate(seeded(2), 60, 0, level{0, 42.5})},
		{"zeros", make([]float64, 60)},
		{"noise only", generate(seeded(3), 200, 0.03, level{0, 100})},
		{"a spike", spiked(generate(seeded(4), 60, 0.03, level{0, 100}), 30, 3)},
		{"a spike near the end", spiked(generate(seeded(5), 60, 0.03, level{0, 100}), 58, 3)},
		{"a spike at the end", spiked(generate(seeded(6), 60, 0.03, level{0, 100}), 59, 3)},
		{"a dip", spiked(generate(seeded(7), 60, 0.03, level{0, 100}), 20, 0.1)},
		{"a shift below the magnitude", generate(seeded(8), 60, 0.002, level{0, 100}, level{30, 102})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := changepoint.Detect(tt.series, changepoint.DefaultOptions()); len(got) != 0 {
				t.Errorf("Detect = %+v, want none", got)
			}
		})
	}
}

// spiked multiplies series[i] by factor.
func spiked(series []float64, i int, factor float64) []float64 {
	series[i] *= factor
	return series
}

func TestDetectShifts(t *testing.T) {
	tests := []struct {
		name   string
		series []float64
		opt    changepoint.Options
		want   []int
		within int // how far a change point may lie from the one wanted; zero means 1
	}{
		{"a clean step", []float64{1, 1, 1, 1, 2, 2, 2, 2}, changepoint.DefaultOptions(), []int{4}, 0},
		{"a step up", generate(seeded(10), 60, 0.01, level{0, 100}, level{30, 110}), changepoint.DefaultOptions(), []int{30}, 0},
		{"a step down", generate(seeded(11), 60, 0.01, level{0, 100}, level{17, 80}), changepoint.DefaultOptions(), []int{17}, 0},
		{"two steps", generate(seeded(12), 60, 0.01, level{0, 100}, level{20, 110}, level{40, 95}), changepoint.DefaultOptions(), []int{20, 40}, 0},
		{"a regression and its fix", generate(seeded(13), 90, 0.02, level{0, 100}, level{40, 120}, level{50, 100}), changepoint.DefaultOptions(), []int{40, 50}, 0},
		{"three steps over 300 values", generate(seeded(14), 300, 0.03, level{0, 100}, level{70, 110}, level{150, 125}, level{230, 100}), changepoint.DefaultOptions(), []int{70, 150, 230}, 0},
		{"the last values", generate(seeded(15), 40, 0.01, level{0, 100}, level{36, 130}), changepoint.DefaultOptions(), []int{36}, 0},
		{"negative values", generate(seeded(16), 60, 0.01, level{0, -100}, level{25, -115}), changepoint.DefaultOptions(), []int{25}, 0},
		{"a step beside a spike", spiked(generate(seeded(17), 60, 0.01, level{0, 100}, level{30, 110}), 15, 1.5), changepoint.DefaultOptions(), []int{30}, 0},
		{"a small shift with a small bound", generate(seeded(18), 60, 0.002, level{0, 100}, level{30, 102}), changepoint.Options{MinMagnitude: 0.01}, []int{30}, 0},
		// Only the long windows see this one: 25 values on each side
		// cannot tell 5 % from 10 % noise.
		{"a small shift in much noise", generate(seeded(25), 300, 0.10, level{0, 100}, level{150, 105}), changepoint.Options{MinMagnitude: 0.025}, []int{150}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := changepoint.Detect(tt.series, tt.opt)
			if !near(indexes(got), tt.want, max(tt.within, 1)) {
				t.Fatalf("Detect = %+v, want change points at %v", got, tt.want)
			}
			for _, p := range got {
				checkPoint(t, tt.series, got, p, tt.opt)
			}
		})
	}
}

// checkPoint checks that p's numbers are what its segments say.
func checkPoint(t *testing.T, series []float64, all []changepoint.Point, p changepoint.Point, opt changepoint.Options) {
	t.Helper()
	i := slices.Index(all, p)
	lo, hi := 0, len(series)
	if i > 0 {
		lo = all[i-1].Index
	}
	if i+1 < len(all) {
		hi = all[i+1].Index
	}
	before, after := mean(series[lo:p.Index]), mean(series[p.Index:hi])
	if !approx(p.MeanBefore, before) || !approx(p.MeanAfter, after) {
		t.Errorf("point at %d: means %v, %v, want %v, %v", p.Index, p.MeanBefore, p.MeanAfter, before, after)
	}
	if m := (after - before) / math.Abs(before); !approx(p.Magnitude, m) {
		t.Errorf("point at %d: magnitude %v, want %v", p.Index, p.Magnitude, m)
	}
	maxP := opt.MaxPValue
	if maxP == 0 {
		maxP = changepoint.DefaultMaxPValue
	}
	if p.PValue < 0 || p.PValue > maxP {
		t.Errorf("point at %d: p %v outside [0, %v]", p.Index, p.PValue, maxP)
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestDetectPValue checks the t-test against a value computed apart:
// two samples of six, means 3 and 6, pooled variance 1.2, give t = 4.7434
// with 10 degrees of freedom, whose two-sided p by the closed form for an
// even df is 0.00078803.
func TestDetectPValue(t *testing.T) {
	series := []float64{2, 4, 2, 4, 2, 4, 5, 7, 5, 7, 5, 7}
	got := changepoint.Detect(series, changepoint.DefaultOptions())
	if len(got) != 1 || got[0].Index != 6 {
		t.Fatalf("Detect = %+v, want one change point at 6", got)
	}
	if math.Abs(got[0].PValue-0.00078803) > 1e-8 {
		t.Errorf("p = %v, want 0.00078803", got[0].PValue)
	}
	if !approx(got[0].MeanBefore, 3) || !approx(got[0].MeanAfter, 6) || !approx(got[0].Magnitude, 1) {
		t.Errorf("Detect = %+v, want means 3 and 6, magnitude 1", got[0])
	}
}

func TestDetectScale(t *testing.T) {
	base := generate(seeded(20), 60, 0.01, level{0, 100}, level{30, 110})
	want := changepoint.Detect(base, changepoint.DefaultOptions())
	if len(want) != 1 {
		t.Fatalf("Detect(base) = %+v, want one change point", want)
	}
	for _, scale := range []float64{1e-300, 1e-5, 3, 1e300} {
		scaled := make([]float64, len(base))
		for i, v := range base {
			scaled[i] = v * scale
		}
		got := changepoint.Detect(scaled, changepoint.DefaultOptions())
		if len(got) != 1 || got[0].Index != want[0].Index || !approx(got[0].MeanAfter, want[0].MeanAfter*scale) {
			t.Errorf("scale %g: Detect = %+v, want %+v scaled", scale, got, want)
		}
	}
}

func TestDetectFromZero(t *testing.T) {
	series := []float64{0, 0, 0, 0, 0, 0, 0.5, 0.6, 0.4, 0.5, 0.5, 0.5}
	got := changepoint.Detect(series, changepoint.DefaultOptions())
	if len(got) != 1 || got[0].Index != 6 || got[0].MeanBefore != 0 || got[0].Magnitude != 1 {
		t.Errorf("Detect = %+v, want one change point at 6 from 0, magnitude 1", got)
	}
}

func TestDetectOptions(t *testing.T) {
	series := generate(seeded(30), 60, 0.005, level{0, 100}, level{30, 103})
	if got := changepoint.Detect(series, changepoint.DefaultOptions()); len(got) != 0 {
		t.Errorf("default options: Detect = %+v, want none (a 3 %% shift)", got)
	}
	if got := changepoint.Detect(series, changepoint.Options{MaxPValue: math.NaN(), MinMagnitude: -1}); len(got) != 0 {
		t.Errorf("invalid options: Detect = %+v, want none, as with the defaults", got)
	}
	if got := changepoint.Detect(series, changepoint.Options{MinMagnitude: 0.02}); !near(indexes(got), []int{30}, 1) {
		t.Errorf("MinMagnitude 0.02: Detect = %+v, want one change point at 30", got)
	}
	if got := changepoint.Detect(series, changepoint.Options{MaxPValue: 1e-300, MinMagnitude: 0.02}); len(got) != 0 {
		t.Errorf("MaxPValue 1e-300: Detect = %+v, want none", got)
	}
}

func TestDetectIsPure(t *testing.T) {
	series := generate(seeded(40), 120, 0.03, level{0, 100}, level{40, 112}, level{90, 90})
	kept := slices.Clone(series)
	first := changepoint.Detect(series, changepoint.DefaultOptions())
	if !slices.Equal(series, kept) {
		t.Fatal("Detect changed its input")
	}
	for range 3 {
		if again := changepoint.Detect(series, changepoint.DefaultOptions()); !slices.Equal(again, first) {
			t.Fatalf("Detect = %+v, then %+v", first, again)
		}
	}
}

// TestDetectSegments checks that no change point leaves a segment of one
// value, on series where windows overlapping each other propose cuts
// next to each other: two steps and outliers, with a loose bound.
func TestDetectSegments(t *testing.T) {
	for seed := uint64(1000); seed < 1100; seed++ {
		r := seeded(seed)
		n := 40 + r.IntN(200)
		series := generate(r, n, 0.03, level{0, 100}, level{r.IntN(n), 110}, level{r.IntN(n), 90})
		for range 3 {
			series = spiked(series, r.IntN(n), 1+4*r.Float64())
		}
		got := changepoint.Detect(series, changepoint.Options{MaxPValue: 0.05})
		prev := 0
		for _, p := range append(got, changepoint.Point{Index: n}) {
			if p.Index-prev < 2 {
				t.Fatalf("seed %d: change points at %v leave a segment of %d values", seed, indexes(got), p.Index-prev)
			}
			prev = p.Index
		}
	}
}

// TestDetectConstant checks that constant stretches hold no change point
// even with no bounds at all (MaxPValue 1 keeps any cut that moves the
// mean): a constant segment's mean must come out exactly its value,
// whatever the rounding of a sum of it.
func TestDetectConstant(t *testing.T) {
	for _, v := range []float64{0.1, 1.0 / 3, 3e-7, -7.77, 123.456} {
		series := make([]float64, 97)
		for i := range series {
			series[i] = v
			if i >= 40 {
				series[i] = 3 * v
			}
		}
		got := changepoint.Detect(series, changepoint.Options{MaxPValue: 1, MinMagnitude: 0})
		if !slices.Equal(indexes(got), []int{40}) {
			t.Errorf("Detect(%v × 40, %v × 57) = %+v, want one change point at 40", v, 3*v, got)
		}
	}
}
