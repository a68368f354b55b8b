package analysis

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/monitor"
)

// Analyze turns a job's stored runs into what they mean: per point the
// statistics over its repeats, the difference to the baseline target, where
// each target saturates, and the verdict: the spec's thresholds and the
// rule that some request of every run succeeds (NoSuccessRule). It is
// pure and deterministic: the same spec and runs, in any order, give the
// same Analysis. Points not run yet are listed with Runs 0 and zero stats,
// and take no part in comparison, saturation or verdict; runs without a
// result, partial runs (stopped by a cancel), or runs naming no point of
// the spec, are ignored.
//
// Thresholds relative to a compare_to job ("rps >= 0.95 * baseline.rps")
// need that job's runs: Analyze has none, so they fail; use AnalyzeAgainst.
func Analyze(s job.Spec, runs []job.Run) job.Analysis {
	return AnalyzeAgainst(s, runs, nil)
}

// AnalyzeAgainst is Analyze with base, the job the spec's compare_to
// resolved to (nil: none loaded): every point is compared with base's
// point of the same target and sweep values, and relative thresholds are
// judged cell by cell against it, a cell base lacks failing.
func AnalyzeAgainst(s job.Spec, runs []job.Run, base *Baseline) job.Analysis {
	return AnalyzeWithHistory(s, runs, base, nil)
}

// AnalyzeWithHistory is AnalyzeAgainst with history, the earlier jobs of
// the spec's template that its trend is judged against (newest first).
func AnalyzeWithHistory(s job.Spec, runs []job.Run, base *Baseline, history History) job.Analysis {
	cells := groupRuns(s.Points(), runs)
	sums := make([]summary, len(cells))
	for i, c := range cells {
		sums[i] = summarise(c.point, c.reports)
		judgeLimit(&sums[i].PointSummary, c.servers) // limit.go
	}
	compareTargets(s, sums)
	a := job.Analysis{Points: make([]job.PointSummary, len(sums))}
	for i := range sums {
		a.Points[i] = sums[i].PointSummary
	}
	a.Saturation = saturation(a.Points)
	bc := indexBaseline(base)
	a.CompareTo = compareWithBaseline(sums, bc)
	controlFalseDiscovery(differences(&a))
	a.Verdict = verdict(s, cells, bc, history)
	a.Capacity, a.CapacitySentence = Capacity(s, runs) // capacity.go
	return a
}

// pointRuns is one point with the reports of its runs, in repeat order.
type pointRuns struct {
	point   job.Point
	reports []*abreport.Report
	servers []*monitor.Server // per report; nil where the run has none
	// aborts are the runs a threshold marked "abort" ended early.
	aborts []abortedRun
	// testbed is the testbed ID of the cell's runs, job.TestbedMixed when
	// they were measured on different testbeds.
	testbed string
}

// abortedRun is a run that a threshold ended: which, and why.
type abortedRun struct {
	repeat    int
	threshold string
	reason    string
}

func groupRuns(points []job.Point, runs []job.Run) []pointRuns {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b job.Run) int {
		return cmp.Or(cmp.Compare(a.Point, b.Point), cmp.Compare(a.Repeat, b.Repeat))
	})
	cells := make([]pointRuns, len(points))
	for i, p := range points {
		cells[i].point = p
	}
	for _, r := range sorted {
		if r.Result == nil || r.Partial || r.Point < 0 || r.Point >= len(cells) {
			continue
		}
		c := &cells[r.Point]
		switch tb := r.TestbedID(); {
		case len(c.reports) == 0:
			c.testbed = tb
		case c.testbed != tb:
			c.testbed = job.TestbedMixed
		}
		cells[r.Point].reports = append(cells[r.Point].reports, r.Result)
		cells[r.Point].servers = append(cells[r.Point].servers, r.Server)
		if r.Aborted {
			cells[r.Point].aborts = append(cells[r.Point].aborts, abortedRun{repeat: r.Repeat, threshold: r.AbortedBy, reason: r.AbortReason})
		}
	}
	return cells
}

// summary is a point's summary with the per-repeat values behind RPS,
// GoodRPS and PercentilesMs (keys "rps", "good_rps", "50", "99"...), which
// the significance of a comparison needs and the stored summary does not
// keep.
type summary struct {
	job.PointSummary
	samples map[string][]float64
}

// summarise computes a point's statistics. Req/s and the ratios count
// every run; latencies only the runs where something completed (see
// metric.Metric.Read), so their N may be below Runs.
func summarise(p job.Point, reports []*abreport.Report) summary {
	ps := summary{samples: map[string][]float64{"rps": metricSamples(reports, "rps"), "good_rps": metricSamples(reports, "good_rps")}}
	ps.PointSummary = job.PointSummary{
		Point:            p,
		Runs:             len(reports),
		TimePerRequestMs: metricStat(reports, "time_per_request_ms"),
		PercentilesMs:    make(map[string]job.Stat, len(percentKeys())+len(abreport.TailPercents())),
		FailedRatio:      metricStat(reports, "failed_ratio"),
		Non2xxRatio:      metricStat(reports, "non_2xx_ratio"),
		ErrorRatio:       metricStat(reports, "error_ratio"),
	}
	ps.RPS = newStat(ps.samples["rps"])
	ps.GoodRPS = newStat(ps.samples["good_rps"])
	for _, pc := range percentKeys() {
		k := strconv.Itoa(pc)
		ps.samples[k] = metricSamples(reports, "p"+k+"_ms")
		ps.PercentilesMs[k] = newStat(ps.samples[k])
	}
	for _, k := range abreport.TailPercents() {
		ps.samples[k] = metricSamples(reports, "p"+k+"_ms")
		ps.PercentilesMs[k] = newStat(ps.samples[k])
	}
	ps.Noisy = ps.RPS.CV > NoisyCV
	var handshakes []float64
	for _, r := range reports {
		ps.ClientSaturated = ps.ClientSaturated || r.ClientSaturated
		if r.Unsteady {
			if ps.Unsteady == 0 {
				ps.UnsteadyReason = r.UnsteadyReason
			}
			ps.Unsteady++
		}
		if r.TLSHandshakeMs != nil {
			handshakes = append(handshakes, r.TLSHandshakeMs.Mean)
		}
		if f := r.TLSFailures; f != nil {
			if ps.TLSFailures == nil {
				ps.TLSFailures = &abreport.TLSFailures{}
			}
			ps.TLSFailures.Merge(*f)
		}
	}
	if len(handshakes) > 0 {
		st := newStat(handshakes)
		ps.TLSHandshakeMs = &st
	}
	return ps
}

// sliceKey names a point's requests/duration/rate value: the points of one
// target that share it form a concurrency series.
type sliceKey struct {
	requests int
	duration job.Duration
	rate     float64
}

func sliceOf(p job.Point) sliceKey {
	return sliceKey{requests: p.Requests, duration: p.Duration, rate: p.Rate}
}

// differences are every difference the analysis states, to the baseline
// target and to the compare_to job: the family whose false discovery rate
// is held.
func differences(a *job.Analysis) []difference {
	var diffs []difference
	add := func(c *job.Comparison) {
		if c != nil {
			diffs = append(diffs, difference{&c.RPSSignificance, c.RPSPct},
				difference{&c.P50Significance, c.P50Pct}, difference{&c.P99Significance, c.P99Pct})
		}
	}
	for i := range a.Points {
		for k := range a.Points[i].Comparisons {
			add(&a.Points[i].Comparisons[k])
		}
	}
	if a.CompareTo != nil {
		for i := range a.CompareTo.Cells {
			add(a.CompareTo.Cells[i].Comparison)
		}
	}
	return diffs
}

// NoisyCV is the coefficient of variation of req/s over repeats above which
// a point is flagged noisy.
const NoisyCV = 0.10
