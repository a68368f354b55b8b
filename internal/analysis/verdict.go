package analysis

import (
	"fmt"

	"github.com/benchq/benchq/internal/job"
)

// verdict evaluates every threshold of the spec against the mean of its
// metric over each run point (of its target, when it names one), and,
// unless the spec allows it, fails every point with a run in which no
// request succeeded (see NoSuccessRule), thresholds or not: fail with
// every failing cell listed (the thresholds' in the spec's order, then the
// points without a success), none when nothing failed and there are no
// thresholds, pass otherwise. A threshold relative to the compare_to job
// compares each cell with the baseline job's cell of the same target and
// sweep values; base is nil when no baseline was loaded. Points not run yet
// are not judged; the worker sets the job's verdict only once every point
// has run. A threshold that no longer parses (the spec was validated at
// submission, so only a stored spec from an older version) fails on its
// own rather than pass silently. The spec's trend, if any, is judged
// against history (see Trend) after the thresholds.
func verdict(s job.Spec, cells []pointRuns, base *baselineCells, history History) job.VerdictResult {
	var failures []job.ThresholdFailure
	for _, e := range s.Thresholds {
		raw := e.Threshold
		th, err := job.ParseThreshold(raw)
		if err != nil {
			failures = append(failures, job.ThresholdFailure{Threshold: raw, Point: -1, Reason: err.Error()})
			continue
		}
		if th.RefersToBaseline() && !base.usable() {
			failures = append(failures, job.ThresholdFailure{Threshold: raw, Point: -1, BaselineJob: base.id(), Reason: base.whyUnusable()})
			continue
		}
		failures = append(failures, judge(raw, th, cells, base)...)
	}
	if s.Trend != nil {
		failures = append(failures, judgeTrend(*s.Trend, cells, history)...)
	}
	if !s.AllowNoSuccess {
		failures = append(failures, noSuccess(cells)...)
	}
	switch {
	case len(failures) > 0:
		return job.VerdictResult{Result: job.VerdictFail, Failures: failures}
	case len(s.Thresholds) == 0 && s.Trend == nil:
		return job.VerdictResult{Result: job.VerdictNone}
	}
	return job.VerdictResult{Result: job.VerdictPass}
}

// judge lists the cells that break one threshold. A cell with a run the
// threshold aborted fails with the abort's reason, whatever its mean: the
// run stopped as soon as the threshold was certainly broken, so its
// counts cover less than the point asked for.
func judge(raw string, th job.Threshold, cells []pointRuns, base *baselineCells) []job.ThresholdFailure {
	var out []job.ThresholdFailure
	for _, c := range cells {
		p := c.point
		if len(c.reports) == 0 || (th.Target != "" && th.Target != p.Target) {
			continue
		}
		f := failureAt(raw, p)
		if a, ok := abortedBy(c, raw); ok {
			f.Value = metricStat(c.reports, th.Metric).Mean
			f.Reason = fmt.Sprintf("aborted repeat %d: %s", a.repeat, a.reason)
			out = append(out, f)
			continue
		}
		st := metricStat(c.reports, th.Metric)
		if st.N == 0 {
			f.Reason = "no request completed, so there is no " + th.Metric
			out = append(out, f)
			continue
		}
		f.Value = st.Mean
		if !th.RefersToBaseline() {
			if !holds(th, st.Mean) {
				out = append(out, f)
			}
			continue
		}
		if judgeRelative(&f, th, c, base) {
			out = append(out, f)
		}
	}
	return out
}

// judgeRelative fills f for a threshold relative to the baseline job and
// reports whether the cell fails. A cell the baseline job lacks fails: a
// regression gate that passes because nothing was compared is worse than
// none.
//
// A cell whose mean breaks the bound fails only when the difference is
// significant: its repeats are tested against the baseline's repeats
// moved to the bound (factor × value + offset each), so "rps >= 0.95 *
// baseline.rps" fails on a drop beyond 5 % that the noise of the repeats
// does not explain. With too few repeats for the test to conclude
// anything, the mean alone decides, as a gate that could never fail would
// be worse than a noisy one.
func judgeRelative(f *job.ThresholdFailure, th job.Threshold, c pointRuns, base *baselineCells) bool {
	f.BaselineJob = base.jobID
	bc, ok := base.cells[keyOfCell(c.point)]
	if !ok || len(bc.reports) == 0 {
		f.Reason = fmt.Sprintf("no matching cell in baseline job %s", base.jobID)
		return true
	}
	bs := metricStat(bc.reports, th.Baseline)
	if bs.N == 0 {
		f.Reason = fmt.Sprintf("baseline job %s has no %s for this cell: no request completed there", base.jobID, th.Baseline)
		return true
	}
	bound := boundOf(th, bs.Mean)
	f.Baseline, f.Bound = &bs.Mean, &bound
	if compareOp(th.Op, f.Value, bound) {
		return false
	}
	bounds := metricSamples(bc.reports, th.Baseline)
	for i, v := range bounds {
		bounds[i] = boundOf(th, v)
	}
	pct, ok := 0.0, bound != 0
	if ok {
		pct = (f.Value - bound) / bound * 100
	}
	sig := significance(bounds, metricSamples(c.reports, th.Metric), pct, ok)
	f.Significance = &sig
	return sig.Significant || !sig.Conclusive
}

// abortedBy is the first run of c that threshold raw aborted.
func abortedBy(c pointRuns, raw string) (abortedRun, bool) {
	for _, a := range c.aborts {
		if a.threshold == raw {
			return a, true
		}
	}
	return abortedRun{}, false
}

func failureAt(raw string, p job.Point) job.ThresholdFailure {
	return job.ThresholdFailure{
		Threshold: raw, Target: p.Target, Point: p.Index, Concurrency: p.Concurrency,
		Requests: p.Requests, Duration: p.Duration, Rate: p.Rate,
	}
}

// holds reports whether v satisfies t's absolute bound. == and != compare
// exactly, which suits the counters (complete, failed, non_2xx) they are
// meant for.
func holds(t job.Threshold, v float64) bool { return compareOp(t.Op, v, t.Value) }

func compareOp(op string, v, bound float64) bool {
	switch op {
	case "<":
		return v < bound
	case "<=":
		return v <= bound
	case ">":
		return v > bound
	case ">=":
		return v >= bound
	case "==":
		return v == bound
	case "!=":
		return v != bound
	}
	return false
}

// boundOf is the value t compares against, given the baseline job's mean of
// t.Baseline in the matching cell (ignored for an absolute threshold).
func boundOf(t job.Threshold, baseline float64) float64 {
	if t.Baseline == "" {
		return t.Value
	}
	return t.Factor*baseline + t.Offset
}
