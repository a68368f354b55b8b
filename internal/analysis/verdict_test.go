package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestThresholdHoldsEveryOperator(t *testing.T) {
	tests := []struct {
		op   string
		want [3]bool // v = 109, 110, 111 against 110
	}{
		{"<", [3]bool{true, false, false}},
		{"<=", [3]bool{true, true, false}},
		{">", [3]bool{false, false, true}},
		{">=", [3]bool{false, true, true}},
		{"==", [3]bool{false, true, false}},
		{"!=", [3]bool{true, false, true}},
	}
	for _, tt := range tests {
		th := job.Threshold{Metric: "rps", Op: tt.op, Value: 110}
		for i, v := range []float64{109, 110, 111} {
			if got := holds(th, v); got != tt.want[i] {
				t.Errorf("holds(%q, %v) = %v, want %v", th.String(), v, got, tt.want[i])
			}
		}
	}
}

// verdictRuns is targets a and b at c = 1, 4 with three repeats; a runs at
// 100, 110, 120 req/s (mean 110), b at 300.
func verdictRuns(t *testing.T, thresholds ...string) (job.Spec, []job.Run) {
	t.Helper()
	s := jobtest.SweepSpec([]int{1, 4}, "a", "b")
	s.Sweep.Repeats, s.Thresholds = 3, job.Thresholds(thresholds...)
	var runs []job.Run
	for _, c := range []int{1, 4} {
		runs = append(runs, runsFor(t, s, "a", c, abRun(c, 100), abRun(c, 110), abRun(c, 120))...)
		runs = append(runs, runsFor(t, s, "b", c, abRun(c, 300), abRun(c, 300), abRun(c, 300))...)
	}
	return s, runs
}

func TestVerdictOperatorsOnMeans(t *testing.T) {
	tests := []struct {
		threshold string
		want      string
	}{
		{"a: rps < 110", job.VerdictFail}, {"a: rps < 110.5", job.VerdictPass},
		{"a: rps <= 110", job.VerdictPass}, {"a: rps <= 109.9", job.VerdictFail},
		{"a: rps > 110", job.VerdictFail}, {"a: rps > 109.9", job.VerdictPass},
		{"a: rps >= 110", job.VerdictPass}, {"a: rps >= 110.1", job.VerdictFail},
		{"a: rps == 110", job.VerdictPass}, {"a: rps == 100", job.VerdictFail},
		{"a: rps != 110", job.VerdictFail}, {"a: rps != 100", job.VerdictPass},
		{"complete == 3000", job.VerdictFail}, // a completes 1000, 1100, 1200; b 3000
		{"b: complete == 3000", job.VerdictPass},
		{"failed == 0", job.VerdictPass}, {"failed_ratio <= 0.01", job.VerdictPass}, {"non_2xx == 0", job.VerdictPass},
		{"b: p99_ms < 27", job.VerdictPass}, // c·2000/300: 6.67 ms at c = 1 and 26.7 at c = 4
		{"b: p99_ms < 20", job.VerdictFail},
	}
	for _, tt := range tests {
		s, runs := verdictRuns(t, tt.threshold)
		if got := Analyze(s, runs).Verdict; got.Result != tt.want {
			t.Errorf("verdict(%q) = %+v, want %s", tt.threshold, got, tt.want)
		}
	}
}

func TestVerdictListsEveryFailingCell(t *testing.T) {
	s, runs := verdictRuns(t, "rps >= 200", "b: rps >= 200", "a: p50_ms < 10")
	got := Analyze(s, runs).Verdict
	// Points: 0 a@1, 1 b@1, 2 a@4, 3 b@4. p50 of a is c·500/rps: at c = 1 the
	// mean of 5, 4.545…, 4.166… ms; at c = 4 four times that, 18.2 ms.
	p50a4 := (4*500/100.0 + 4*500/110.0 + 4*500/120.0) / 3
	d := job.Duration(10 * time.Second)
	want := job.VerdictResult{Result: job.VerdictFail, Failures: []job.ThresholdFailure{
		{Threshold: "rps >= 200", Target: "a", Point: 0, Concurrency: 1, Duration: d, Value: 110},
		{Threshold: "rps >= 200", Target: "a", Point: 2, Concurrency: 4, Duration: d, Value: 110},
		{Threshold: "a: p50_ms < 10", Target: "a", Point: 2, Concurrency: 4, Duration: d, Value: p50a4},
	}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("verdict mismatch (-want +got):\n%s", diff)
	}
}

func TestVerdictNoneAndPass(t *testing.T) {
	s, runs := verdictRuns(t)
	if got := Analyze(s, runs).Verdict; got.Result != job.VerdictNone || got.Failures != nil {
		t.Errorf("verdict(no thresholds) = %+v, want none", got)
	}
	s, runs = verdictRuns(t, "rps >= 100", "b: rps > 299", "failed_ratio == 0")
	if got := Analyze(s, runs).Verdict; got.Result != job.VerdictPass || got.Failures != nil {
		t.Errorf("verdict(all hold) = %+v, want pass", got)
	}
}

// A target where nothing completed has no latency; a latency threshold on
// it fails with a reason rather than passing on a 0.
func TestVerdictDeadTargetFailsLatencyThreshold(t *testing.T) {
	s := jobtest.SweepSpec([]int{1}, "a")
	s.Thresholds = job.Thresholds("p95_ms < 200", "rps > 0")
	dead := &abreport.Report{FailedRequests: 5, Failed: abreport.Failures{Connect: 5}}
	got := Analyze(s, runsFor(t, s, "a", 1, dead)).Verdict
	if got.Result != job.VerdictFail || len(got.Failures) != 3 || !strings.Contains(got.Failures[0].Reason, "no request completed") ||
		got.Failures[1].Threshold != "rps > 0" || got.Failures[1].Reason != "" || got.Failures[2].Threshold != NoSuccessRule {
		t.Errorf("verdict(dead target) = %+v, want fail on both, the latency one with a reason, then no_success", got)
	}
}

func TestVerdictUnparsableStoredThresholdFails(t *testing.T) {
	s, runs := verdictRuns(t, "p97_ms < 5")
	got := Analyze(s, runs).Verdict
	if got.Result != job.VerdictFail || len(got.Failures) != 1 || got.Failures[0].Point != -1 || !strings.Contains(got.Failures[0].Reason, "unknown metric") {
		t.Errorf("verdict(unknown metric) = %+v, want fail naming it", got)
	}
}

// A run a threshold aborted fails that threshold in its cell with the
// abort's reason, even where the cell's mean would pass: the run stopped
// short of what the point asked for.
func TestVerdictAbortedRunFailsItsThreshold(t *testing.T) {
	s, runs := verdictRuns(t)
	s.Thresholds = []job.ThresholdEntry{{Threshold: "failed_ratio < 0.01", Abort: job.AbortRun}, {Threshold: "rps > 1"}}
	for i := range runs {
		if runs[i].Target == "b" && runs[i].Concurrency == 4 && runs[i].Repeat == 1 {
			runs[i].Aborted, runs[i].AbortedBy, runs[i].AbortReason = true, "failed_ratio < 0.01", "failed_ratio 0.5 >= 0.01 after 100 requests"
		}
	}
	got := verdict(s, groupRuns(s.Points(), runs), nil, nil)
	if got.Result != job.VerdictFail || len(got.Failures) != 1 {
		t.Fatalf("verdict = %+v, want one failure", got)
	}
	f := got.Failures[0]
	if f.Threshold != "failed_ratio < 0.01" || f.Target != "b" || f.Concurrency != 4 || !strings.Contains(f.Reason, "aborted repeat 1: failed_ratio 0.5 >= 0.01") {
		t.Errorf("failure = %+v, want b at c=4 failing failed_ratio with the abort's reason", f)
	}
}
