package report

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/metric"
)

// writeJUnit writes the job's verdict as JUnit XML, for CI dashboards:
// one testsuite per target, and in it one testcase per check × cell,
// classname the target. The checks are the spec's thresholds (each on the
// cells of its target) and the rule that some request of every run
// succeeds (analysis.NoSuccessRule, unless the spec allows none); a cell
// with neither has one testcase named by the cell, so its timings still
// show. A broken threshold is a <failure> naming the value and the bound
// (with the test's p and repeats where a significance test decided); a
// cell with no value to judge — no request succeeded or completed, the
// baseline job lacks it — or a threshold that could not be judged at all
// is an <error>, as is a cell a failed job never ran; a cell a canceled
// or running job has not run is <skipped>. A failure the verdict lists
// beyond these (the trend's) is a testcase of its own. Each suite's
// properties carry the job and every cell's means over repeats (rps,
// p50_ms, p99_ms, failed_ratio, repeats ...), named "c=8 n=1000 p99_ms".
func writeJUnit(w io.Writer, j *job.Job, runs []job.Run, a job.Analysis) error {
	doc := junitOf(j, runs, a)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitCell is one point of the sweep with what the JUnit report needs of
// it.
type junitCell struct {
	point   job.Point
	summary *job.PointSummary // nil or Runs 0: nothing judged
	seconds float64           // the time its runs took
	started time.Time         // its first run's start; zero when none ran
	aborted map[string]string // threshold as written -> the first abort's reason
}

func (c junitCell) ran() bool { return c.summary != nil && c.summary.Runs > 0 }

// label names the cell as ab's flags would: "c=8 n=1000".
func (c junitCell) label() string {
	return concLabel(c.point.Concurrency) + " " + stopFlag(c.point)
}

// junitCheck is one rule a cell is judged by.
type junitCheck struct {
	raw    string         // as written in the spec, or analysis.NoSuccessRule
	parsed *job.Threshold // nil for the no-success rule and a threshold that no longer parses
}

// name is the check as a testcase names it: the threshold as written;
// the no-success rule by what it asks.
func (k junitCheck) name() string {
	if k.raw == analysis.NoSuccessRule {
		return "requests succeeded"
	}
	return k.raw
}

func (k junitCheck) appliesTo(p job.Point) bool {
	return k.parsed == nil || k.parsed.Target == "" || k.parsed.Target == p.Target
}

// junitCellsOf joins the spec's points to their summaries and runs, in
// target order, then the points' order.
func junitCellsOf(j *job.Job, runs []job.Run, a job.Analysis) []junitCell {
	points := j.Spec.Points()
	cells := make([]junitCell, len(points))
	for i, p := range points {
		cells[i] = junitCell{point: p, aborted: map[string]string{}}
	}
	for i := range a.Points {
		if k := a.Points[i].Point.Index; k >= 0 && k < len(cells) {
			cells[k].summary = &a.Points[i]
		}
	}
	for _, r := range runs {
		if r.Point < 0 || r.Point >= len(cells) {
			continue
		}
		c := &cells[r.Point]
		if d := r.FinishedAt.Sub(r.StartedAt); d > 0 {
			c.seconds += d.Seconds()
		}
		if !r.StartedAt.IsZero() && (c.started.IsZero() || r.StartedAt.Before(c.started)) {
			c.started = r.StartedAt
		}
		if _, seen := c.aborted[r.AbortedBy]; r.Aborted && !seen {
			c.aborted[r.AbortedBy] = r.AbortReason
		}
	}
	slices.SortStableFunc(cells, func(x, y junitCell) int {
		return cmp.Or(cmp.Compare(x.point.TargetIndex, y.point.TargetIndex), cmp.Compare(x.point.Index, y.point.Index))
	})
	return cells
}

// junitChecks lists the rules every cell is judged by, in the verdict's
// order.
func junitChecks(s job.Spec) []junitCheck {
	var out []junitCheck
	for _, e := range s.Thresholds {
		k := junitCheck{raw: e.Threshold}
		if th, err := job.ParseThreshold(e.Threshold); err == nil {
			k.parsed = &th
		}
		out = append(out, k)
	}
	if !s.AllowNoSuccess {
		out = append(out, junitCheck{raw: analysis.NoSuccessRule})
	}
	return out
}

func junitOf(j *job.Job, runs []job.Run, a job.Analysis) junitSuites {
	failures := map[junitKey]job.ThresholdFailure{}
	whole := map[string]job.ThresholdFailure{} // thresholds that failed as a whole
	for _, f := range a.Verdict.Failures {
		if f.Point < 0 {
			whole[f.Threshold] = f
			continue
		}
		failures[junitKey{f.Threshold, f.Point}] = f
	}
	checks := junitChecks(j.Spec)
	cells := junitCellsOf(j, runs, a)
	judged := map[junitKey]bool{}
	var suites []junitSuite
	byTarget := map[string]int{}
	for _, c := range cells {
		i, ok := byTarget[c.point.Target]
		if !ok {
			i = len(suites)
			byTarget[c.point.Target] = i
			suites = append(suites, junitSuite{Name: xmlText(c.point.Target), ID: i, Properties: junitJobProperties(j, c.point)})
		}
		s := &suites[i]
		s.Time += junitSeconds(c.seconds)
		if ts := c.started.UTC().Format(junitTimestamp); !c.started.IsZero() && (s.Timestamp == "" || ts < s.Timestamp) {
			s.Timestamp = ts
		}
		s.Properties = append(s.Properties, junitCellProperties(c)...)
		named := 0
		for _, k := range checks {
			if !k.appliesTo(c.point) {
				continue
			}
			named++
			judged[junitKey{k.raw, c.point.Index}] = true
			tc := junitCaseOf(c, k.name()+" · "+c.label())
			tc.judge(j, c, k, failures, whole)
			s.Cases = append(s.Cases, tc)
		}
		if named == 0 {
			tc := junitCaseOf(c, c.label())
			tc.judge(j, c, junitCheck{}, nil, nil)
			s.Cases = append(s.Cases, tc)
		}
	}
	for _, f := range a.Verdict.Failures {
		i, ok := byTarget[f.Target]
		if f.Point < 0 || f.Point >= len(cells) || !ok || judged[junitKey{f.Threshold, f.Point}] {
			continue
		}
		suites[i].Cases = append(suites[i].Cases, junitOtherFailure(j, cellAt(cells, f.Point), f))
	}
	return junitTotals(j, suites)
}

// cellAt finds the cell of point index.
func cellAt(cells []junitCell, index int) junitCell {
	for _, c := range cells {
		if c.point.Index == index {
			return c
		}
	}
	return junitCell{}
}

// junitKey names one check of one cell.
type junitKey struct {
	threshold string
	point     int
}

// junitTimestamp is Ant's timestamp: ISO 8601 without a zone, in UTC.
const junitTimestamp = "2006-01-02T15:04:05"

func junitCaseOf(c junitCell, name string) junitCase {
	return junitCase{Name: xmlText(name), Classname: xmlText(c.point.Target), Time: junitSeconds(c.seconds)}
}

// judge sets the case's outcome: k's failure in the cell, if any, else
// passed; a cell that did not run is skipped, or an error when the job
// failed. k is the zero check for a cell judged by nothing.
func (tc *junitCase) judge(j *job.Job, c junitCell, k junitCheck, failures map[junitKey]job.ThresholdFailure, whole map[string]job.ThresholdFailure) {
	if !c.ran() {
		tc.notRun(j)
		return
	}
	if f, ok := whole[k.raw]; ok && k.raw != "" {
		typ := "invalid_threshold"
		if f.BaselineJob != "" || (k.parsed != nil && k.parsed.RefersToBaseline()) {
			typ = "baseline"
		}
		tc.Error = &junitOutcome{Message: xmlText(f.Reason), Type: typ, Details: xmlText(junitDetails(k.raw, c, f.Reason))}
		return
	}
	f, ok := failures[junitKey{k.raw, c.point.Index}]
	if !ok || k.raw == "" {
		return
	}
	switch {
	case k.raw == analysis.NoSuccessRule:
		tc.Error = &junitOutcome{Message: xmlText(f.Reason), Type: "no_success", Details: xmlText(junitDetails(k.name(), c, f.Reason))}
	case c.aborted[k.raw] != "":
		msg := "the run was aborted: " + c.aborted[k.raw]
		tc.Failure = &junitOutcome{Message: xmlText(msg), Type: "threshold", Details: xmlText(junitDetails(k.raw, c, msg))}
	case f.Reason != "":
		typ := "no_value"
		if f.BaselineJob != "" {
			typ = "baseline"
		}
		tc.Error = &junitOutcome{Message: xmlText(f.Reason), Type: typ, Details: xmlText(junitDetails(k.raw, c, f.Reason))}
	default:
		msg := junitFailureMessage(k, f, c)
		tc.Failure = &junitOutcome{Message: xmlText(msg), Type: "threshold", Details: xmlText(junitDetails(k.raw, c, msg))}
	}
}

// notRun marks a case whose cell has no run to judge.
func (tc *junitCase) notRun(j *job.Job) {
	switch j.Status {
	case job.StatusFailed:
		msg := "the job failed before this cell ran"
		if j.Error != "" {
			msg += ": " + j.Error
		}
		tc.Error = &junitOutcome{Message: xmlText(msg), Type: "job_failed"}
	case job.StatusCanceled:
		tc.Skipped = &junitOutcome{Message: "the job was canceled before this cell's runs were done"}
	case job.StatusSucceeded:
		tc.Skipped = &junitOutcome{Message: "no run of this cell was stored"}
	default:
		tc.Skipped = &junitOutcome{Message: "not run yet: the job is " + xmlText(j.Status)}
	}
}

// junitFailureMessage says what was measured against which bound: "p99_ms
// was 73.21 ms, want < 50 ms (mean of 3 repeats)", and for a threshold
// relative to the compare_to job, the baseline and the test that decided.
func junitFailureMessage(k junitCheck, f job.ThresholdFailure, c junitCell) string {
	metricName, op, bound := "", "", ""
	if k.parsed != nil {
		metricName, op = k.parsed.Metric, k.parsed.Op
		bound = strconv.FormatFloat(k.parsed.Value, 'g', -1, 64)
	}
	unit := ""
	if m, ok := metric.Lookup(metricName); ok && m.Unit != "ratio" {
		unit = " " + m.Unit
	}
	if f.Bound != nil {
		bound = junitNumber(*f.Bound)
	}
	msg := fmt.Sprintf("%s was %s%s, want %s %s%s (mean of %s)", metricName, junitNumber(f.Value), unit, op, bound, unit, plural(c.summary.Runs, "repeat"))
	if f.Baseline != nil && k.parsed != nil && k.parsed.RefersToBaseline() {
		// The right-hand side holds no operator, so the last one is the
		// threshold's own.
		rhs := strings.TrimSpace(k.raw[strings.LastIndex(k.raw, op)+len(op):])
		msg += fmt.Sprintf("; the bound is %s, with baseline.%s = %s in job %s", rhs, k.parsed.Baseline, junitNumber(*f.Baseline), f.BaselineJob)
	}
	if sig := f.Significance; sig != nil {
		msg += fmt.Sprintf("; %s, %d vs %d repeats", sig.Text, sig.N, sig.NBase)
	}
	return msg
}

// junitDetails is an outcome's text: the check, the cell and what
// happened, a line each.
func junitDetails(check string, c junitCell, what string) string {
	return fmt.Sprintf("check: %s\ntarget: %s\ncell: %s\n%s\n", check, c.point.Target, c.label(), what)
}

// junitNumber writes a measured value: three decimals at most from 1 up,
// four significant digits below.
func junitNumber(v float64) string {
	if math.Abs(v) >= 1 {
		return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// junitJobProperties lead each suite's properties: which job, how it
// ended, which target.
func junitJobProperties(j *job.Job, p job.Point) []junitProperty {
	props := []junitProperty{{"job_id", xmlText(j.ID)}, {"job_status", xmlText(j.Status)}}
	if j.Verdict != "" {
		props = append(props, junitProperty{"verdict", xmlText(j.Verdict)})
	}
	if p.TargetIndex >= 0 && p.TargetIndex < len(j.Spec.Targets) && j.Spec.Targets[p.TargetIndex].URL != "" {
		props = append(props, junitProperty{"url", xmlText(j.Spec.Targets[p.TargetIndex].URL)})
	}
	return props
}

// junitCellProperties are a cell's means over its repeats, named by the
// cell and the metric as thresholds name it; what was not measured (a
// latency where nothing completed) is left out rather than written as 0.
func junitCellProperties(c junitCell) []junitProperty {
	ps := c.summary
	if !c.ran() {
		return nil
	}
	prefix := c.label() + " "
	props := []junitProperty{{xmlText(prefix + "repeats"), xmlText(strconv.Itoa(ps.Runs))}}
	add := func(name string, st job.Stat) {
		if st.N > 0 {
			props = append(props, junitProperty{xmlText(prefix + name), xmlText(junitNumber(st.Mean))})
		}
	}
	add("rps", ps.RPS)
	add("good_rps", ps.GoodRPS)
	for _, pc := range []string{"50", "90", "99"} {
		add("p"+pc+"_ms", ps.PercentilesMs[pc])
	}
	add("failed_ratio", ps.FailedRatio)
	add("error_ratio", ps.ErrorRatio)
	return props
}

// junitOtherFailure is the case of a failure of the verdict that no check
// names (the trend's): a failure when it broke a bound, an error when the
// cell had no value to hold to one.
func junitOtherFailure(j *job.Job, c junitCell, f job.ThresholdFailure) junitCase {
	typ := "threshold"
	if j.Spec.Trend != nil && f.Threshold == j.Spec.Trend.WithDefaults().String() {
		typ = "trend"
	}
	tc := junitCaseOf(c, f.Threshold+" · "+c.label())
	msg := f.Reason
	if msg == "" {
		msg = fmt.Sprintf("%s: the value was %s", f.Threshold, junitNumber(f.Value))
	}
	out := &junitOutcome{Message: xmlText(msg), Type: typ, Details: xmlText(junitDetails(f.Threshold, c, msg))}
	if f.Bound != nil {
		tc.Failure = out
	} else {
		out.Type = "no_value"
		tc.Error = out
	}
	return tc
}

// junitTotals counts every suite and the whole; a failed job whose every
// cell ran still shows its error, as a case of its own.
func junitTotals(j *job.Job, suites []junitSuite) junitSuites {
	doc := junitSuites{Name: xmlText(title(j))}
	jobErrorShown := false
	for i := range suites {
		suites[i].count()
		for _, c := range suites[i].Cases {
			jobErrorShown = jobErrorShown || (c.Error != nil && c.Error.Type == "job_failed")
		}
	}
	if j.Status == job.StatusFailed && !jobErrorShown {
		msg := "the job failed"
		if j.Error != "" {
			msg += ": " + j.Error
		}
		s := junitSuite{Name: xmlText(title(j)), ID: len(suites), Properties: junitJobProperties(j, job.Point{TargetIndex: -1}),
			Cases: []junitCase{{Name: "job", Classname: xmlText(title(j)), Error: &junitOutcome{Message: xmlText(msg), Type: "job_failed"}}}}
		s.count()
		suites = append(suites, s)
	}
	for _, s := range suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Time += s.Time
	}
	if j.StartedAt != nil && j.FinishedAt != nil && j.FinishedAt.After(*j.StartedAt) {
		doc.Time = junitSeconds(j.FinishedAt.Sub(*j.StartedAt).Seconds())
	}
	doc.Suites = suites
	return doc
}
