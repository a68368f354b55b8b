package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/benchq/benchq/internal/job"
	"golang.org/x/perf/benchmath"
	"gonum.org/v1/gonum/stat/distuv"
)

// SignificanceAlpha is the level below which a difference between two
// points' repeats counts as significant, and one minus the confidence of
// the interval given with it.
const SignificanceAlpha = 0.05

// minRepeatsForUTest is how many repeats per side the U test needs before
// its smallest possible p-value falls below SignificanceAlpha.
var minRepeatsForUTest = func() int {
	for n := 1; n < 100; n++ {
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range n {
			xs[i], ys[i] = float64(i), float64(n+i)
		}
		if uTest(xs, ys).P < SignificanceAlpha {
			return n
		}
	}
	return 100
}()

// MinRepeatsForSignificance is how many repeats per side a comparison
// needs before it can say anything: its interval needs a spread.
func MinRepeatsForSignificance() int { return 2 }

func uTest(base, x []float64) benchmath.Comparison {
	th := benchmath.Thresholds{CompareAlpha: SignificanceAlpha}
	return benchmath.AssumeNothing.Compare(benchmath.NewSample(base, &th), benchmath.NewSample(x, &th))
}

// significance compares x's repeats with base's; pct is the difference of
// their means in percent of base's, as PercentChange gives it (ok false:
// no meaningful percentage).
func significance(base, x []float64, pct float64, ok bool) job.Significance {
	s := job.Significance{NBase: len(base), N: len(x)}
	if !ok || len(base) == 0 || len(x) == 0 {
		s.Text = "n/a"
		return s
	}
	if len(base) >= minRepeatsForUTest && len(x) >= minRepeatsForUTest {
		p := uTest(base, x).P
		s.PU = &p
	}
	if iv, ok := effectInterval(base, x); ok {
		s.P, s.CILowPct, s.CIHighPct = &iv.p, &iv.lowPct, &iv.highPct
		s.Conclusive = true
		s.Significant = iv.p < SignificanceAlpha
	}
	s.Text = describe(s, pct, 0)
	return s
}

// describe writes Text from the other fields and pct, the difference of
// the means; family, when not 0, is how many comparisons false-discovery
// control weighed this one among when it took its significance away.
func describe(s job.Significance, pct float64, family int) string {
	est := FormatPercent(pct)
	switch {
	case !s.Conclusive:
		return fmt.Sprintf("~ %s (%d vs %d repeats: an interval needs %d per side)", est, s.NBase, s.N, MinRepeatsForSignificance())
	case s.Significant:
		return fmt.Sprintf("%s %s (p%s)", est, formatInterval(*s.CILowPct, *s.CIHighPct), withOp(formatP(*s.P)))
	case family > 0:
		return fmt.Sprintf("~ %s %s (p%s, not significant among %d comparisons)", est, formatInterval(*s.CILowPct, *s.CIHighPct), withOp(formatP(*s.P)), family)
	default:
		return fmt.Sprintf("~ %s %s (p%s)", est, formatInterval(*s.CILowPct, *s.CIHighPct), withOp(formatP(*s.P)))
	}
}

// interval is a difference's confidence interval in percent of the
// baseline and its test's p-value.
type interval struct {
	lowPct, highPct, p float64
}

// effectInterval is the 95 % t interval of x against base (see
// Significance); ok is false when a side has fewer than 2 values, or the
// difference has no percentage (a baseline mean of 0 on the linear scale).
func effectInterval(base, x []float64) (interval, bool) {
	if len(base) < 2 || len(x) < 2 {
		return interval{}, false
	}
	positive := !slices.ContainsFunc(base, func(v float64) bool { return v <= 0 }) &&
		!slices.ContainsFunc(x, func(v float64) bool { return v <= 0 })
	b, v := base, x
	if positive {
		b, v = logsOf(base), logsOf(x)
	}
	mb, vb := meanVariance(b)
	mx, vx := meanVariance(v)
	nb, nx := float64(len(b)), float64(len(v))
	d := mx - mb
	var se, df float64
	if len(b) == len(v) {
		df = nb + nx - 2
		se = math.Sqrt(((nb-1)*vb + (nx-1)*vx) / df * (1/nb + 1/nx))
	} else {
		qb, qx := vb/nb, vx/nx
		se = math.Sqrt(qb + qx)
		df = (qb + qx) * (qb + qx) / (qb*qb/(nb-1) + qx*qx/(nx-1))
	}
	var iv interval
	var lo, hi float64
	switch {
	case se == 0 && d == 0:
		iv.p = 1
	case se == 0:
		lo, hi = d, d
	default:
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
		q := t.Quantile(1 - SignificanceAlpha/2)
		lo, hi = d-q*se, d+q*se
		iv.p = 2 * t.Survival(math.Abs(d)/se)
	}
	if positive {
		iv.lowPct, iv.highPct = math.Expm1(lo)*100, math.Expm1(hi)*100
		return iv, true
	}
	if mb == 0 {
		return interval{}, false
	}
	iv.lowPct, iv.highPct = lo/math.Abs(mb)*100, hi/math.Abs(mb)*100
	return iv, true
}

func logsOf(vs []float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = math.Log(v)
	}
	return out
}

// meanVariance is the mean and the sample variance (n-1) of vs.
func meanVariance(vs []float64) (mean, variance float64) {
	for _, v := range vs {
		mean += v
	}
	mean /= float64(len(vs))
	for _, v := range vs {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(vs)-1)
}

// difference is one stated comparison: its significance and the
// difference of the means it is about, in percent.
type difference struct {
	sig *job.Significance
	pct float64
}

// controlFalseDiscovery holds the false discovery rate of a job's
// comparisons at SignificanceAlpha (Benjamini-Hochberg): each tested
// comparison gets PAdjusted, and one significant alone but not among the
// others loses its significance and says so.
func controlFalseDiscovery(diffs []difference) {
	var tested []difference
	for _, d := range diffs {
		if d.sig.P != nil {
			tested = append(tested, d)
		}
	}
	m := len(tested)
	slices.SortStableFunc(tested, func(a, b difference) int { return cmp.Compare(*a.sig.P, *b.sig.P) })
	adjusted := 1.0
	for i := m - 1; i >= 0; i-- {
		s := tested[i].sig
		adjusted = min(adjusted, *s.P*float64(m)/float64(i+1))
		q := adjusted
		s.PAdjusted = &q
		if s.Significant && q > SignificanceAlpha {
			s.Significant = false
			s.Text = describe(*s, tested[i].pct, m)
		}
	}
}

// formatInterval writes an interval in percent, to one decimal when it is
// wide enough for that to say something, else to two.
func formatInterval(lo, hi float64) string {
	f := "%+.1f"
	if hi-lo < 2 {
		f = "%+.2f"
	}
	return fmt.Sprintf("["+f+", "+f+"]", zeroSign(lo), zeroSign(hi))
}

// zeroSign keeps a bound that rounds to zero from printing as "-0.0".
func zeroSign(v float64) float64 {
	if math.Abs(v) < 0.005 {
		return 0
	}
	return v
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
