package job

import (
	"fmt"

	"golang.org/x/perf/benchmath"
)

// SignificanceAlpha is the level below which a difference between two
// points' repeats counts as significant: benchstat's default.
const SignificanceAlpha = 0.05

// Significance says whether a difference between two points is more than
// the noise of their repeats: a Mann-Whitney U test over the per-repeat
// values, as benchstat does (no assumption about their distribution).
type Significance struct {
	// P is the test's p-value; null when there is nothing to test (a
	// side without a value).
	P *float64 `json:"p" extensions:"x-nullable"`
	// Significant is set only when P < SignificanceAlpha.
	Significant bool `json:"significant"`
	// NBase and N are the repeats that had a value on the baseline's side
	// and on this point's.
	NBase int `json:"n_base"`
	N     int `json:"n"`
	// Conclusive is false when the repeats are too few for the test ever
	// to reach SignificanceAlpha, however far apart they are: nothing can
	// be concluded then, and Text says how many repeats it needs.
	Conclusive bool `json:"conclusive"`
	// Text is the difference as a person reads it: "+12.69 % (p=0.01)",
	// "~ (no significant difference, p=0.40)" or "~ (nothing can be
	// concluded: …)", or "n/a" when there is no percentage to give.
	Text string `json:"text"`
}

// minRepeatsForSignificance is how many repeats per side the U test needs
// before its smallest possible p-value falls below SignificanceAlpha.
var minRepeatsForSignificance = func() int {
	for n := 1; n < 100; n++ {
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range n {
			xs[i], ys[i] = float64(i), float64(n+i)
		}
		if significanceOf(xs, ys).P < SignificanceAlpha {
			return n
		}
	}
	return 100
}()

// MinRepeatsForSignificance is how many repeats per side a comparison
// needs before it can say anything.
func MinRepeatsForSignificance() int { return minRepeatsForSignificance }

func significanceOf(base, x []float64) benchmath.Comparison {
	th := benchmath.Thresholds{CompareAlpha: SignificanceAlpha}
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(base, &th), benchmath.NewSample(x, &th))
}

// significance tests x's repeats against base's; pct is the difference of
// their means in percent of base's, as PercentChange gives it (ok false:
// no meaningful percentage).
func significance(base, x []float64, pct float64, ok bool) Significance {
	s := Significance{NBase: len(base), N: len(x)}
	if !ok || len(base) == 0 || len(x) == 0 {
		s.Text = "n/a"
		return s
	}
	c := significanceOf(base, x)
	p := c.P
	s.P = &p
	s.Significant = p < SignificanceAlpha
	// benchstat's rule: a test that could not reach alpha even with the
	// sides maximally apart says nothing either way.
	s.Conclusive = s.Significant || len(base) >= minRepeatsForSignificance || len(x) >= minRepeatsForSignificance
	switch {
	case s.Significant:
		s.Text = fmt.Sprintf("%s (p%s)", FormatPercent(pct), withOp(formatP(p)))
	case !s.Conclusive:
		s.Text = fmt.Sprintf("~ (nothing can be concluded: %d vs %d repeats, the test needs %d per side)", len(base), len(x), minRepeatsForSignificance)
	default:
		s.Text = fmt.Sprintf("~ (no significant difference, p%s)", withOp(formatP(p)))
	}
	return s
}

// withOp puts "=" before a formatted p-value that carries no "<".
func withOp(p string) string {
	if p[0] == '<' {
		return p
	}
	return "=" + p
}

// formatP writes a p-value with two decimals, three below 0.01 so that a
// small one does not print as 0.00, and "<0.001" below that.
func formatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	if p < 0.01 {
		return fmt.Sprintf("%.3f", p)
	}
	return fmt.Sprintf("%.2f", p)
}
