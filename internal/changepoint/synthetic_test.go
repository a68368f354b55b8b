package changepoint_test

import (
	"math"
	"testing"

	"github.com/benchq/benchq/internal/changepoint"
)

// synthetic is a seeded set of series like a metric over a template's
// jobs: 60 values with normal noise of a given CV, half with a step up or
// down at a known point between 10 and 50, half without.
type synthetic struct {
	cv, shift float64
	series    [][]float64
	step      []int        // index of the step, -1 for none
	levels    [][2]float64 // the means before and after the step
}

const (
	syntheticLen       = 60
	syntheticStep      = 0.05
	syntheticTolerance = 2
)

func newSynthetic(seed uint64, count int, cv, shift float64) synthetic {
	r := seeded(seed)
	s := synthetic{cv: cv, shift: shift}
	for i := range count {
		base := 10 + 990*r.Float64()
		if i%2 == 1 {
			s.series = append(s.series, generate(r, syntheticLen, cv, level{0, base}))
			s.step = append(s.step, -1)
			s.levels = append(s.levels, [2]float64{base, base})
			continue
		}
		at := 10 + r.IntN(41)
		after := base * (1 + shift)
		if r.IntN(2) == 0 {
			after = base * (1 - shift)
		}
		s.series = append(s.series, generate(r, syntheticLen, cv, level{0, base}, level{at, after}))
		s.step = append(s.step, at)
		s.levels = append(s.levels, [2]float64{base, after})
	}
	return s
}

// score is what a detector found over a synthetic set.
type score struct {
	steps, found  int // series with a step, and those with a change point within the tolerance of it
	near          int // those with a change point within 5 values of it
	flat, alarmed int // series without, and those with any change point
	extra         int // change points beyond the one found in series with a step
}

func (sc score) recall() float64     { return float64(sc.found) / float64(sc.steps) }
func (sc score) nearly() float64     { return float64(sc.near) / float64(sc.steps) }
func (sc score) falseAlarm() float64 { return float64(sc.alarmed) / float64(sc.flat) }

func (sc *score) add(o score) {
	sc.steps += o.steps
	sc.found += o.found
	sc.near += o.near
	sc.flat += o.flat
	sc.alarmed += o.alarmed
	sc.extra += o.extra
}

func (s synthetic) score(opt changepoint.Options) score {
	var sc score
	for i, series := range s.series {
		indexes := indexes(changepoint.Detect(series, opt))
		if s.step[i] < 0 {
			sc.flat++
			if len(indexes) > 0 {
				sc.alarmed++
			}
			continue
		}
		sc.steps++
		closest := math.MaxInt
		for _, at := range indexes {
			closest = min(closest, abs(at-s.step[i]))
		}
		if closest <= syntheticTolerance {
			sc.found++
		}
		if closest <= 5 {
			sc.near++
		}
		sc.extra += max(len(indexes)-1, 0)
	}
	return sc
}

// oracle is the share of step series whose step an estimator that knows
// both levels and the noise places within the tolerance: the maximum
// likelihood cut. No detector, which must estimate all three, does
// better on average, so it says how much a recall bound can ask.
func (s synthetic) oracle() float64 {
	var steps, found int
	for i, series := range s.series {
		if s.step[i] < 0 {
			continue
		}
		steps++
		before, after := s.levels[i][0], s.levels[i][1]
		// gain[c] is the log likelihood of a step at c, less that of
		// no step at all.
		var gain, best float64
		bestAt := 0
		for c := len(series) - 1; c >= 0; c-- {
			gain += logNormal(series[c], after, s.cv*after) - logNormal(series[c], before, s.cv*before)
			if c >= 2 && c <= len(series)-2 && (bestAt == 0 || gain > best) {
				best, bestAt = gain, c
			}
		}
		if abs(bestAt-s.step[i]) <= syntheticTolerance {
			found++
		}
	}
	return float64(found) / float64(steps)
}

func logNormal(x, mean, sd float64) float64 {
	z := (x - mean) / sd
	return -z*z/2 - math.Log(sd)
}

func abs(n int) int { return max(n, -n) }

// TestSynthetic is the method's acceptance on series with known shifts:
// 60 values, 3 % noise, half with a 5 % step, with the default options.
// A 5 % step is measured below 5 % about half the time; MinMagnitude
// drops a shift only when its confidence bound is below it too, so those
// still count.
//
// The set the acceptance names, 100 series (seed 1, not chosen), is
// held to recall within two values of at least 90 % and false alarms of
// at most 5 %. That recall has no margin: with 3 % noise a 5 % step is
// 1.7 standard deviations, and even the oracle that knows both levels
// places it within two values in only about 88 % of series (the set of
// seed 1 is a lucky one, 90 % for both). At 50 series with a step a
// recall moves by 5 points from one seed to the next, so the method is
// also held on twenty sets (2 000 series, seeds 1 to 20): recall within
// two values at least 93 % of the oracle's, within five at least 90 %,
// false alarms at most 5 %. At 2 % noise (2.5 standard deviations) the
// detector passes 90 % within two values on the twenty sets as well.
func TestSynthetic(t *testing.T) {
	opt := changepoint.DefaultOptions()

	named := newSynthetic(1, 100, 0.03, syntheticStep)
	sc := named.score(opt)
	t.Logf("100 series, CV 3 %%, seed 1: recall within ±%d %d/%d (%.0f %%; oracle %.0f %%), within ±5 %d/%d, false alarms %d/%d (%.0f %%), extra change points in step series %d",
		syntheticTolerance, sc.found, sc.steps, 100*sc.recall(), 100*named.oracle(), sc.near, sc.steps, sc.alarmed, sc.flat, 100*sc.falseAlarm(), sc.extra)
	if sc.recall() < 0.9 {
		t.Errorf("seed 1: recall within ±%d %.2f, want at least 0.90", syntheticTolerance, sc.recall())
	}
	if sc.falseAlarm() > 0.05 {
		t.Errorf("seed 1: false alarms %.2f, want at most 0.05", sc.falseAlarm())
	}

	for _, c := range []struct {
		cv          float64
		minOfOracle float64 // recall within the tolerance, as a share of the oracle's
		minRecall   float64 // recall within the tolerance
	}{
		{cv: 0.03, minOfOracle: 0.93, minRecall: 0.80},
		{cv: 0.02, minOfOracle: 0.93, minRecall: 0.90},
	} {
		var total score
		var oracle float64
		for seed := uint64(1); seed <= 20; seed++ {
			set := newSynthetic(seed, 100, c.cv, syntheticStep)
			total.add(set.score(opt))
			oracle += set.oracle() / 20
		}
		t.Logf("2000 series, CV %.0f %%: recall within ±%d %.1f %% (oracle %.1f %%), within ±5 %.1f %%, false alarms %.1f %%, extra change points %d",
			100*c.cv, syntheticTolerance, 100*total.recall(), 100*oracle, 100*total.nearly(), 100*total.falseAlarm(), total.extra)
		if total.recall() < c.minRecall || total.recall() < c.minOfOracle*oracle {
			t.Errorf("CV %v: recall %.3f, want at least %.2f and %.2f of the oracle's %.3f", c.cv, total.recall(), c.minRecall, c.minOfOracle, oracle)
		}
		if total.nearly() < 0.9 {
			t.Errorf("CV %v: recall within ±5 %.3f, want at least 0.90", c.cv, total.nearly())
		}
		if total.falseAlarm() > 0.05 {
			t.Errorf("CV %v: false alarms %.3f, want at most 0.05", c.cv, total.falseAlarm())
		}
	}
}
