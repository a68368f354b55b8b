package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/changepoint"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/metric"
)

// TestbedAny asks for one series across testbeds, where each testbed's
// runs otherwise make a series of their own.
const TestbedAny = "any"

// nearJobs is how many places either side of a shift a later detection of
// the same shift may move to.
const nearJobs = 2

// changeMetrics are the metrics whose change points every job of a
// template keeps, besides the ones its thresholds and trend name.
var changeMetrics = [...]string{"rps", "p50_ms", "p99_ms", "failed_ratio"}

// ChangeMetrics lists the metrics whose change points a job with spec s
// looks for at its end: rps, p50_ms, p99_ms and failed_ratio, and every
// metric its thresholds and trend name, each once.
func ChangeMetrics(s job.Spec) []string {
	out := slices.Clone(changeMetrics[:])
	add := func(name string) {
		if m, ok := metric.Canonical(name); ok && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if ths, err := s.ParsedThresholds(); err == nil {
		for _, th := range ths {
			add(th.Metric)
		}
	}
	if s.Trend != nil {
		add(s.Trend.Metric)
	}
	return out
}

// ChangeQuery selects the series change points are looked for in, and
// how sure and large a shift must be.
type ChangeQuery struct {
	// Template and Branch name the history (the jobs' labels); they only
	// name the series here: the jobs given are that history.
	Template, Branch string
	// Metric is a canonical metric name (metric.Canonical).
	Metric string
	// Target is a target name or URL; empty takes every target.
	Target string
	// Testbed: empty keeps each testbed's runs in series of their own; a
	// testbed ID takes that testbed's only; TestbedAny makes one series
	// of every testbed's runs.
	Testbed string
	// MaxPValue and MinMagnitude are changepoint.Options'.
	MaxPValue, MinMagnitude float64
}

// Series is one series of a template's history: one metric in one cell
// measured on one testbed, oldest first.
type Series struct {
	Name    string
	Testbed string
	Points  []TrendPoint
}

// ChangePoints finds the change points of q's metric in the history jobs
// (in any order), one series per cell and testbed as q says, each
// detected at now. Their ID and acknowledgement are left for the store.
func ChangePoints(q ChangeQuery, jobs []TrendJob, now time.Time) []job.ChangePoint {
	opt := changepoint.Options{MaxPValue: q.MaxPValue, MinMagnitude: q.MinMagnitude}
	var out []job.ChangePoint
	for _, s := range SplitSeries(q, TrendSeries(q.Metric, q.Target, jobs)) {
		values := make([]float64, len(s.Points))
		for i, p := range s.Points {
			values[i] = p.Value
		}
		for _, cp := range changepoint.Detect(values, opt) {
			if cp.Index <= 0 || cp.Index >= len(s.Points) {
				continue
			}
			at := s.Points[cp.Index]
			var near []string
			for i := max(cp.Index-nearJobs, 0); i <= min(cp.Index+nearJobs, len(s.Points)-1); i++ {
				near = append(near, s.Points[i].JobID)
			}
			out = append(out, job.ChangePoint{
				Series: s.Name, Template: q.Template, Branch: q.Branch,
				Target: at.Target, Concurrency: at.Concurrency, Requests: at.Requests, Duration: at.Duration, Rate: at.Rate,
				Metric: q.Metric, Testbed: s.Testbed, JobID: at.JobID, Commit: at.Commit,
				Before: cp.MeanBefore, After: cp.MeanAfter, Magnitude: cp.Magnitude, PValue: cp.PValue,
				DetectedAt: now.UTC(), Near: near,
			})
		}
	}
	return out
}

// SplitSeries splits points (oldest first, as TrendSeries gives them) into
// the series q selects: one per cell and testbed, or per cell across
// testbeds for TestbedAny, or per cell of one testbed's runs. A cell whose
// runs were measured on different testbeds is a testbed of its own
// (job.TestbedMixed), so it never joins a single testbed's series.
func SplitSeries(q ChangeQuery, points []TrendPoint) []Series {
	var out []Series
	index := map[string]int{}
	for _, p := range points {
		tb := p.Testbed
		switch {
		case q.Testbed == TestbedAny:
			tb = TestbedAny
		case q.Testbed != "" && tb != q.Testbed:
			continue
		}
		name := seriesName(q, p, tb)
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, Series{Name: name, Testbed: tb})
		}
		out[i].Points = append(out[i].Points, p)
	}
	return out
}

// OnTestbed keeps the points measured on testbed (an ID); TestbedAny and
// "" keep them all.
func OnTestbed(points []TrendPoint, testbed string) []TrendPoint {
	if testbed == "" || testbed == TestbedAny {
		return points
	}
	return slices.DeleteFunc(slices.Clone(points), func(p TrendPoint) bool { return p.Testbed != testbed })
}

// seriesName names a series: template and branch, the cell, the metric,
// the testbed ("checkout@main shop c=2 n=40 p99_ms testbed=4f1c2a9b0d3e").
func seriesName(q ChangeQuery, p TrendPoint, testbed string) string {
	parts := []string{q.Template}
	if q.Branch != "" {
		parts[0] += "@" + q.Branch
	}
	parts = append(parts, p.Target, fmt.Sprintf("c=%d", p.Concurrency))
	switch {
	case p.Requests > 0:
		parts = append(parts, fmt.Sprintf("n=%d", p.Requests))
	case p.Duration > 0:
		parts = append(parts, "t="+p.Duration.String())
	case p.Rate > 0:
		parts = append(parts, fmt.Sprintf("rate=%g", p.Rate))
	}
	if testbed == "" {
		testbed = "unknown"
	}
	parts = append(parts, q.Metric, "testbed="+testbed)
	return strings.Join(parts, " ")
}
