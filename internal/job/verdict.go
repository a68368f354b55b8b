package job

// verdict evaluates every threshold of the spec against the mean of its
// metric over each run point (of its target, when it names one): none
// without thresholds, fail with every failing cell listed, pass otherwise.
// Points not run yet are not judged; the worker sets the job's verdict only
// once every point has run. A threshold that no longer parses (the spec was
// validated at submission, so only a stored spec from an older version)
// fails on its own rather than pass silently.
func verdict(thresholds []string, cells []pointRuns) VerdictResult {
	if len(thresholds) == 0 {
		return VerdictResult{Result: VerdictNone}
	}
	var failures []ThresholdFailure
	for _, raw := range thresholds {
		th, err := ParseThreshold(raw)
		if err != nil {
			failures = append(failures, ThresholdFailure{Threshold: raw, Point: -1, Reason: err.Error()})
			continue
		}
		failures = append(failures, judge(raw, th, cells)...)
	}
	if len(failures) > 0 {
		return VerdictResult{Result: VerdictFail, Failures: failures}
	}
	return VerdictResult{Result: VerdictPass}
}

// judge lists the cells that break one threshold.
func judge(raw string, th Threshold, cells []pointRuns) []ThresholdFailure {
	var out []ThresholdFailure
	for _, c := range cells {
		p := c.point
		if len(c.reports) == 0 || (th.Target != "" && th.Target != p.Target) {
			continue
		}
		f := ThresholdFailure{Threshold: raw, Target: p.Target, Point: p.Index, Concurrency: p.Concurrency}
		st := metricStat(c.reports, th.Metric)
		if st.N == 0 {
			f.Reason = "no request completed, so there is no " + th.Metric
			out = append(out, f)
			continue
		}
		if f.Value = st.Mean; !th.Holds(st.Mean) {
			out = append(out, f)
		}
	}
	return out
}

// Holds reports whether v satisfies t. == and != compare exactly, which
// suits the counters (complete, failed, non_2xx) they are meant for.
func (t Threshold) Holds(v float64) bool {
	switch t.Op {
	case "<":
		return v < t.Value
	case "<=":
		return v <= t.Value
	case ">":
		return v > t.Value
	case ">=":
		return v >= t.Value
	case "==":
		return v == t.Value
	case "!=":
		return v != t.Value
	}
	return false
}
