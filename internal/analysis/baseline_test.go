package analysis

import (
	"testing"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestBound(t *testing.T) {
	tests := []struct {
		in   string
		base float64
		want float64
	}{
		{"rps >= 0.95 * baseline.rps", 200, 190},
		{"p99_ms <= baseline.p99_ms + 5", 20, 25},
		{"p99_ms <= 1.5 * baseline.p99_ms - 2", 20, 28},
		{"rps >= 100", 12345, 100},
	}
	for _, tt := range tests {
		th, err := job.ParseThreshold(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := boundOf(th, tt.base); got != tt.want {
			t.Errorf("boundOf(%q, %v) = %v, want %v", tt.in, tt.base, got, tt.want)
		}
	}
}

// baselineJob is verdictRuns' shape (a and b at c = 1, 4) run earlier with
// req/s rpsA for a and rpsB for b, one repeat each.
func baselineJob(t *testing.T, rpsA, rpsB float64) *Baseline {
	t.Helper()
	s := jobtest.SweepSpec([]int{1, 4}, "a", "b")
	var runs []job.Run
	for _, c := range []int{1, 4} {
		runs = append(runs, runsFor(t, s, "a", c, abRun(c, rpsA))...)
		runs = append(runs, runsFor(t, s, "b", c, abRun(c, rpsB))...)
	}
	return &Baseline{JobID: "BASE", Spec: s, Runs: runs}
}

func TestRelativeVerdict(t *testing.T) {
	// The job: a at 110 req/s (mean of 100, 110, 120), b at 300.
	tests := []struct {
		name      string
		threshold string
		base      *Baseline
		want      string
		failing   int
	}{
		{"no regression", "rps >= 0.95 * baseline.rps", nil, job.VerdictPass, 0}, // base set below: 110 vs 110, 300 vs 300
		{"a regressed at both c", "rps >= 0.95 * baseline.rps", baselineJob(t, 120, 300), job.VerdictFail, 2},
		{"within 10 %", "rps >= 0.9 * baseline.rps", baselineJob(t, 120, 300), job.VerdictPass, 0},
		{"scoped to b", "b: rps >= 0.95 * baseline.rps", baselineJob(t, 120, 300), job.VerdictPass, 0},
		{"everything regressed", "rps > baseline.rps * 1.5", baselineJob(t, 110, 300), job.VerdictFail, 4},
		{"latency offset", "p99_ms <= baseline.p99_ms + 1", baselineJob(t, 130, 300), job.VerdictFail, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, runs := verdictRuns(t, tt.threshold)
			s.CompareTo = &job.CompareTo{JobID: "BASE"}
			base := tt.base
			if base == nil {
				base = baselineJob(t, 110, 300)
			}
			got := AnalyzeAgainst(s, runs, base).Verdict
			if got.Result != tt.want || len(got.Failures) != tt.failing {
				t.Fatalf("verdict(%q) = %+v, want %s with %d failing cells", tt.threshold, got, tt.want, tt.failing)
			}
			for _, f := range got.Failures {
				if f.Baseline == nil || f.Bound == nil || f.BaselineJob != "BASE" || f.Reason != "" {
					t.Errorf("failure %+v: want baseline, bound and job, no reason", f)
				}
			}
		})
	}
}

func TestRelativeVerdictListsEveryRegressedCell(t *testing.T) {
	s, runs := verdictRuns(t, "rps >= 0.95 * baseline.rps")
	s.CompareTo = &job.CompareTo{JobID: "BASE"}
	got := AnalyzeAgainst(s, runs, baselineJob(t, 120, 300)).Verdict
	d := job.Duration(10e9)
	base, bound := 120.0, 114.0
	// One baseline repeat: no interval, so the means decide.
	sig := &job.Significance{NBase: 1, N: 3, Text: "~ -3.51 % (1 vs 3 repeats: an interval needs 2 per side)"}
	want := job.VerdictResult{Result: job.VerdictFail, Failures: []job.ThresholdFailure{
		{Threshold: "rps >= 0.95 * baseline.rps", Target: "a", Point: 0, Concurrency: 1, Duration: d, Value: 110, BaselineJob: "BASE", Baseline: &base, Bound: &bound, Significance: sig},
		{Threshold: "rps >= 0.95 * baseline.rps", Target: "a", Point: 2, Concurrency: 4, Duration: d, Value: 110, BaselineJob: "BASE", Baseline: &base, Bound: &bound, Significance: sig},
	}}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("verdict mismatch (-want +got):\n%s", diff)
	}
}

// A cell the baseline job never ran fails, naming the job; so does every
// cell when the baseline is gone or was never loaded.
func TestRelativeVerdictWithoutMatchingCell(t *testing.T) {
	s, runs := verdictRuns(t, "rps >= 0.95 * baseline.rps")
	s.CompareTo = &job.CompareTo{JobID: "BASE"}

	partial := baselineJob(t, 110, 300)
	partial.Spec.Sweep.Concurrency = []int{1, 8} // a and b at c = 4 never ran there
	partial.Runs = nil
	for _, c := range []int{1, 8} {
		partial.Runs = append(partial.Runs, runsFor(t, partial.Spec, "a", c, abRun(c, 110))...)
		partial.Runs = append(partial.Runs, runsFor(t, partial.Spec, "b", c, abRun(c, 300))...)
	}
	got := AnalyzeAgainst(s, runs, partial).Verdict
	if got.Result != job.VerdictFail || len(got.Failures) != 2 {
		t.Fatalf("verdict = %+v, want fail with the 2 cells at c = 4", got)
	}
	for _, f := range got.Failures {
		if f.Concurrency != 4 || f.Reason != "no matching cell in baseline job BASE" {
			t.Errorf("failure %+v, want c = 4 with reason %q", f, "no matching cell in baseline job BASE")
		}
	}

	renamed := baselineJob(t, 110, 300)
	renamed.Spec.Targets[1].Name = "c" // b has no counterpart
	if got := AnalyzeAgainst(s, runs, renamed).Verdict; got.Result != job.VerdictFail || len(got.Failures) != 2 || got.Failures[0].Target != "b" {
		t.Errorf("verdict against renamed target = %+v, want b's 2 cells failing", got)
	}

	for name, base := range map[string]*Baseline{"gone": MissingBaseline("BASE"), "not loaded": nil} {
		got := AnalyzeAgainst(s, runs, base).Verdict
		if got.Result != job.VerdictFail || len(got.Failures) != 1 || got.Failures[0].Point != -1 || got.Failures[0].Reason == "" {
			t.Errorf("verdict with baseline %s = %+v, want one failure with a reason", name, got)
		}
	}
}

func TestAnalyzeAgainstComparesCells(t *testing.T) {
	s, runs := verdictRuns(t)
	s.CompareTo = &job.CompareTo{JobID: "BASE"}
	a := AnalyzeAgainst(s, runs, baselineJob(t, 100, 300))
	if a.CompareTo == nil || a.CompareTo.JobID != "BASE" || len(a.CompareTo.Cells) != 4 {
		t.Fatalf("CompareTo = %+v, want 4 cells against BASE", a.CompareTo)
	}
	c := a.CompareTo.Cells[0] // a at c = 1: 110 against 100
	if c.BaselinePoint != 0 || c.RPS != 110 || c.BaselineRPS != 100 || c.Comparison == nil || c.Comparison.RPS != "+10.00 %" {
		t.Errorf("cell 0 = %+v, want 110 against 100 req/s, +10.00 %%", c)
	}
	if a.Verdict.Result != job.VerdictNone {
		t.Errorf("verdict without thresholds = %s, want none", a.Verdict.Result)
	}
	if Analyze(s, runs).CompareTo != nil {
		t.Errorf("Analyze without a baseline set CompareTo")
	}
}

// A relative gate fails a cell only on a significant difference beyond
// the bound: five repeats a side, the job's mean below 0.95 × the
// baseline's either way.
func TestRelativeVerdictIgnoresNoise(t *testing.T) {
	tests := []struct {
		name    string
		base, x []float64
		want    string
	}{
		// means 100 and 94.2: below the bound of 95, but the repeats overlap.
		{"within noise", []float64{80, 90, 100, 110, 120}, []float64{75, 85, 96, 105, 110}, job.VerdictPass},
		// means 100 and 80, apart in every repeat.
		{"significant drop", []float64{98, 99, 100, 101, 102}, []float64{78, 79, 80, 81, 82}, job.VerdictFail},
		// nothing below the bound: no test needed.
		{"no drop", []float64{98, 99, 100, 101, 102}, []float64{98, 99, 100, 101, 102}, job.VerdictPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jobtest.SweepSpec([]int{1}, "a")
			s.Thresholds = job.Thresholds("rps >= 0.95 * baseline.rps")
			s.CompareTo = &job.CompareTo{JobID: "BASE"}
			reports := func(rps []float64) []*abreport.Report {
				var out []*abreport.Report
				for _, v := range rps {
					out = append(out, abRun(1, v))
				}
				return out
			}
			base := &Baseline{JobID: "BASE", Spec: s, Runs: runsFor(t, s, "a", 1, reports(tt.base)...)}
			got := AnalyzeAgainst(s, runsFor(t, s, "a", 1, reports(tt.x)...), base).Verdict
			if got.Result != tt.want {
				t.Fatalf("verdict = %+v, want %s", got, tt.want)
			}
			for _, f := range got.Failures {
				if f.Significance == nil || !f.Significance.Significant || f.Significance.P == nil || *f.Significance.P >= SignificanceAlpha {
					t.Errorf("failing cell's significance = %+v, want significant", f.Significance)
				}
			}
		})
	}
}
