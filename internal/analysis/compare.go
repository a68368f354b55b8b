package analysis

import (
	"fmt"
	"math"

	"github.com/benchq/benchq/internal/job"
)

// compareTargets fills Comparisons on every point that has runs, one per
// pair of s.ComparisonPairs naming its target, against the pair's
// baseline's point with the same concurrency and requests/duration/rate
// when that one has runs too; Comparison is the one against s.Baseline.
func compareTargets(s job.Spec, points []summary) {
	pairs := s.ComparisonPairs()
	if len(pairs) == 0 {
		return
	}
	type key struct {
		target      string
		concurrency int
		slice       sliceKey
	}
	byKey := map[key]*summary{}
	for i := range points {
		if p := &points[i]; p.Runs > 0 {
			byKey[key{p.Point.Target, p.Point.Concurrency, sliceOf(p.Point)}] = p
		}
	}
	for i := range points {
		p := &points[i]
		if p.Runs == 0 {
			continue
		}
		for _, pair := range pairs {
			if pair.Target != p.Point.Target {
				continue
			}
			if b := byKey[key{pair.Baseline, p.Point.Concurrency, sliceOf(p.Point)}]; b != nil {
				p.Comparisons = append(p.Comparisons, *compare(pair.Baseline, *b, *p))
			}
		}
		// Set after the appends, which may move the slice.
		for k := range p.Comparisons {
			if p.Comparisons[k].Baseline == s.Baseline {
				p.Comparison = &p.Comparisons[k]
			}
		}
	}
}

func compare(baseline string, base, x summary) *job.Comparison {
	c := &job.Comparison{Baseline: baseline}
	// Throughput is compared on successes: a target that answers 500s
	// fast must not read as faster.
	c.RPSPct, c.RPS, c.RPSSignificance = compareMetric(base, x, "good_rps", base.GoodRPS, x.GoodRPS)
	c.P50Pct, c.P50, c.P50Significance = compareMetric(base, x, "50", base.PercentilesMs["50"], x.PercentilesMs["50"])
	c.P99Pct, c.P99, c.P99Significance = compareMetric(base, x, "99", base.PercentilesMs["99"], x.PercentilesMs["99"])
	return c
}

// compareMetric is one metric's difference and its significance over the
// repeats the two points' Stats summarise.
func compareMetric(base, x summary, key string, bs, xs job.Stat) (float64, string, job.Significance) {
	pct, text := PercentChange(bs, xs)
	return pct, text, significance(base.samples[key], x.samples[key], pct, text != "n/a")
}

// PercentChange is x's mean relative to base's, in percent of base's, and
// that number as the seeds write it ("+12.69 %"). When either has no value
// (N = 0, e.g. no request completed) or base's mean is 0, there is no
// meaningful percentage: it returns 0 and "n/a".
func PercentChange(base, x job.Stat) (float64, string) {
	if base.N == 0 || x.N == 0 || base.Mean == 0 {
		return 0, "n/a"
	}
	pct := (x.Mean - base.Mean) / base.Mean * 100
	return pct, FormatPercent(pct)
}

// FormatPercent writes a difference in percent with its sign and two
// decimals, as the seeds do: 12.6949 -> "+12.69 %", -3.1 -> "-3.10 %". A
// difference that rounds to zero is "+0.00 %", never "-0.00 %".
func FormatPercent(pct float64) string {
	if math.Abs(pct) < 0.005 {
		pct = 0
	}
	return fmt.Sprintf("%+.2f %%", pct)
}
