package analysis

import (
	"fmt"
	"strings"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/metric"
)

// NoSuccessRule stands in the threshold field of the verdict failure a
// point gets when one of its runs had no successful request. The rule
// holds without any threshold in the spec: a job against a target that
// resets every connection, times out or answers only 5xx measured nothing,
// and a pipeline gating on the verdict must not pass it. A spec turns it
// off with allow_no_success, to measure a failure path on purpose.
const NoSuccessRule = "no_success"

// noSuccess lists, one per point in point order, the points with a run in
// which no request succeeded. A run the caller stopped (canceled) is not
// judged: its counts are partial.
func noSuccess(cells []pointRuns) []job.ThresholdFailure {
	var out []job.ThresholdFailure
	for _, c := range cells {
		var first *abreport.Report
		firstRepeat, none := 0, 0
		for i, r := range c.reports {
			if r.Canceled || metric.SucceededAtMost(r) > 0 {
				continue
			}
			if none == 0 {
				first, firstRepeat = r, i+1
			}
			none++
		}
		if none == 0 {
			continue
		}
		f := failureAt(NoSuccessRule, c.point)
		f.Reason = noSuccessReason(first, firstRepeat, none, len(c.reports))
		out = append(out, f)
	}
	return out
}

// noSuccessReason says what happened in the first run without a success
// (repeat of runs, 1-based as the reports number them) and in how many
// runs of the point that happened.
func noSuccessReason(r *abreport.Report, repeat, none, runs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "0 of %d requests succeeded", metric.Attempted(r))
	if runs > 1 {
		fmt.Fprintf(&b, " in repeat %d/%d", repeat, runs)
		if none > 1 {
			fmt.Fprintf(&b, " (and in %d more of its runs)", none-1)
		}
	}
	if what := whatHappened(r); what != "" {
		b.WriteString(": " + what)
	}
	if r.Aborted != "" {
		b.WriteString("; the run stopped as ab does: " + r.Aborted)
	}
	return b.String()
}

// whatHappened names every kind of unsuccessful request in r with its
// count, in the order of ab's failure classes.
func whatHappened(r *abreport.Report) string {
	f := r.Failed
	var parts []string
	add := func(n int64, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(f.Connect, "could not connect")
	add(f.TLSHandshake, "failed the TLS handshake")
	add(f.PortExhaustion, "found no free local port")
	add(f.Receive, "were closed or reset before the response ended")
	add(f.Exceptions, "were not written or not answered with valid HTTP")
	add(f.BodyTooLarge, "sent a body past the body size cap (max_body)")
	add(f.HeaderTooLarge, "sent a header larger than 8 KiB")
	add(f.Timeout, "timed out")
	add(f.Length, "had a body length unlike the first response's")
	add(r.Non2xxResponses, "were answered with a non-2xx status")
	return strings.Join(parts, ", ")
}
