package analysis

import (
	"strconv"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/google/go-cmp/cmp"
)

// failedRun is a run of 200 requests at c = 4 with the given counters;
// FailedRequests is the sum of f, as the engine fills it.
func failedRun(complete, non2xx int64, f abreport.Failures) *abreport.Report {
	return &abreport.Report{ConcurrencyLevel: 4, CompleteRequests: complete, Non2xxResponses: non2xx,
		FailedRequests: f.Connect + f.Receive + f.Length + f.Exceptions + f.Timeout + f.PortExhaustion + f.TLSHandshake, Failed: f}
}

func TestNoSuccessRule(t *testing.T) {
	ok := abRun(4, 100) // 1000 complete, all 2xx
	tests := []struct {
		name       string
		thresholds []string
		allow      bool
		runs       []*abreport.Report // the repeats of healthz at c = 4
		want       string             // the verdict
		reason     string             // the no_success failure's, "" for none
	}{
		{name: "every request succeeded", runs: []*abreport.Report{ok}, want: job.VerdictNone},
		{name: "every connection reset", runs: []*abreport.Report{failedRun(0, 0, abreport.Failures{Receive: 200})},
			want: job.VerdictFail, reason: "0 of 200 requests succeeded: 200 were closed or reset before the response ended"},
		{name: "garbage status line", runs: []*abreport.Report{failedRun(0, 0, abreport.Failures{Exceptions: 200})},
			want: job.VerdictFail, reason: "0 of 200 requests succeeded: 200 were not written or not answered with valid HTTP"},
		{name: "refused, aborted as ab", runs: []*abreport.Report{func() *abreport.Report {
			r := failedRun(0, 0, abreport.Failures{Connect: 1})
			r.Aborted = "apr_socket_connect(): Connection refused (111)"
			return r
		}()}, want: job.VerdictFail, reason: "0 of 1 requests succeeded: 1 could not connect; the run stopped as ab does: apr_socket_connect(): Connection refused (111)"},
		{name: "mixed failures, none succeeded", runs: []*abreport.Report{failedRun(0, 0, abreport.Failures{Connect: 3, Timeout: 197})},
			want: job.VerdictFail, reason: "0 of 200 requests succeeded: 3 could not connect, 197 timed out"},
		{name: "every response non-2xx", runs: []*abreport.Report{failedRun(200, 200, abreport.Failures{})},
			want: job.VerdictFail, reason: "0 of 200 requests succeeded: 200 were answered with a non-2xx status"},
		{name: "one 2xx among non-2xx", runs: []*abreport.Report{failedRun(200, 199, abreport.Failures{})}, want: job.VerdictNone},
		{name: "short bodies after the first", runs: []*abreport.Report{failedRun(200, 0, abreport.Failures{Length: 199})}, want: job.VerdictNone},
		{name: "short bodies, every status non-2xx", runs: []*abreport.Report{failedRun(200, 200, abreport.Failures{Length: 199})},
			want: job.VerdictFail, reason: "0 of 200 requests succeeded: 199 had a body length unlike the first response's, 200 were answered with a non-2xx status"},
		// 100 Length failures and 100 non-2xx of 200: the counters cannot
		// say they are different requests, so up to 100 may have succeeded.
		{name: "overlap unknown", runs: []*abreport.Report{failedRun(200, 100, abreport.Failures{Length: 100})}, want: job.VerdictNone},
		{name: "canceled run is not judged", runs: []*abreport.Report{func() *abreport.Report {
			r := failedRun(0, 0, abreport.Failures{})
			r.Canceled = true
			return r
		}()}, want: job.VerdictNone},
		{name: "two of three repeats without a success",
			runs: []*abreport.Report{ok, failedRun(0, 0, abreport.Failures{Receive: 200}), failedRun(0, 0, abreport.Failures{Timeout: 1})},
			want: job.VerdictFail, reason: "0 of 200 requests succeeded in repeat 2/3 (and in 1 more of its runs): 200 were closed or reset before the response ended"},
		{name: "a passing threshold does not hide it", thresholds: []string{"failed <= 1000"},
			runs: []*abreport.Report{failedRun(0, 0, abreport.Failures{Receive: 200})},
			want: job.VerdictFail, reason: "0 of 200 requests succeeded: 200 were closed or reset before the response ended"},
		{name: "allow_no_success, no thresholds", allow: true, runs: []*abreport.Report{failedRun(0, 0, abreport.Failures{Receive: 200})}, want: job.VerdictNone},
		{name: "allow_no_success, passing threshold", allow: true, thresholds: []string{"failed <= 1000"},
			runs: []*abreport.Report{failedRun(0, 0, abreport.Failures{Receive: 200})}, want: job.VerdictPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jobtest.SweepSpec([]int{4}, "healthz")
			s.Sweep.Repeats, s.Thresholds, s.AllowNoSuccess = len(tt.runs), job.Thresholds(tt.thresholds...), tt.allow
			got := Analyze(s, runsFor(t, s, "healthz", 4, tt.runs...)).Verdict
			var want job.VerdictResult
			want.Result = tt.want
			if tt.reason != "" {
				want.Failures = []job.ThresholdFailure{{Threshold: NoSuccessRule, Target: "healthz", Point: 0, Concurrency: 4,
					Duration: job.Duration(10 * time.Second), Reason: tt.reason}}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("verdict mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// Each point without a success is listed once, in point order, after the
// thresholds' failures; points not run yet are not judged.
func TestNoSuccessListsPointsAfterThresholds(t *testing.T) {
	s := jobtest.SweepSpec([]int{1, 4}, "a", "b")
	s.Thresholds = job.Thresholds("rps >= 50")
	dead := failedRun(0, 0, abreport.Failures{Receive: 200})
	runs := append(runsFor(t, s, "a", 1, abRun(1, 100)), runsFor(t, s, "b", 1, dead)...)
	runs = append(runs, runsFor(t, s, "a", 4, dead)...) // b at c = 4 has not run
	got := Analyze(s, runs).Verdict
	var order []string
	for _, f := range got.Failures {
		order = append(order, f.Threshold+" "+f.Target+" "+strconv.Itoa(f.Concurrency))
	}
	want := []string{"rps >= 50 b 1", "rps >= 50 a 4", "no_success b 1", "no_success a 4"}
	if got.Result != job.VerdictFail || !cmp.Equal(order, want) {
		t.Errorf("failures = %q (%s), want %q", order, got.Result, want)
	}
}
