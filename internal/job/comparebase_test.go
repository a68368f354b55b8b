package job

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseRelativeThreshold(t *testing.T) {
	tests := []struct {
		in   string
		want Threshold
	}{
		{"rps >= 0.95 * baseline.rps", Threshold{Metric: "rps", Op: ">=", Baseline: "rps", Factor: 0.95}},
		{"p99_ms <= 1.10 * baseline.p99_ms", Threshold{Metric: "p99_ms", Op: "<=", Baseline: "p99_ms", Factor: 1.1}},
		{"p99_ms <= baseline.p99_ms + 5", Threshold{Metric: "p99_ms", Op: "<=", Baseline: "p99_ms", Factor: 1, Offset: 5}},
		{"rps > baseline.rps - 10", Threshold{Metric: "rps", Op: ">", Baseline: "rps", Factor: 1, Offset: -10}},
		{"rps >= baseline.rps", Threshold{Metric: "rps", Op: ">=", Baseline: "rps", Factor: 1}},
		{"rps>=baseline.rps*0.9", Threshold{Metric: "rps", Op: ">=", Baseline: "rps", Factor: 0.9}},
		{"p50_ms < 1.2*baseline.p50_ms+0.5", Threshold{Metric: "p50_ms", Op: "<", Baseline: "p50_ms", Factor: 1.2, Offset: 0.5}},
		{"failed == baseline.failed", Threshold{Metric: "failed", Op: "==", Baseline: "failed", Factor: 1}},
		{"failed_ratio != 2 * baseline.failed_ratio", Threshold{Metric: "failed_ratio", Op: "!=", Baseline: "failed_ratio", Factor: 2}},
		{"mean_ms <= 1e0 * baseline.p99_ms - 1e-3", Threshold{Metric: "mean_ms", Op: "<=", Baseline: "p99_ms", Factor: 1, Offset: -1e-3}},
		{"nginx: rps >= 0.95 * baseline.rps", Threshold{Target: "nginx", Metric: "rps", Op: ">=", Baseline: "rps", Factor: 0.95}},
	}
	for _, tt := range tests {
		got, err := ParseThreshold(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseThreshold(%q) = %+v, %v, want %+v", tt.in, got, err, tt.want)
		}
		if again, err := ParseThreshold(got.String()); err != nil || again != got {
			t.Errorf("ParseThreshold(%q.String() = %q) = %+v, %v, want the same threshold", tt.in, got.String(), again, err)
		}
	}
}

func TestParseRelativeThresholdRefusesBadForms(t *testing.T) {
	for _, bad := range []string{
		"rps >= baseline.rsp",                // unknown metric on the right
		"rsp >= baseline.rps",                // unknown metric on the left
		"rps >= baseline.",                   // no metric
		"rps >= 0.95 baseline.rps",           // missing *
		"rps >= 0.95 * 2 * baseline.rps",     // two factors
		"rps >= 0.95 * baseline.rps * 2",     // two factors
		"rps >= baseline.rps + ",             // offset without number
		"rps >= baseline.rps + x",            // offset not a number
		"rps >= baseline.rps / 2",            // no division
		"rps >= 0 * baseline.rps",            // factor must be positive
		"rps >= -0.5 * baseline.rps",         // negative factor
		"rps >= baseline.rps + baseline.rps", // one reference only
		"rps >= baseline.rps 5",              // trailing number
		"rps >= NaN * baseline.rps",          // not finite
	} {
		if _, err := ParseThreshold(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseThreshold(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

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
		th, err := ParseThreshold(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Bound(tt.base); got != tt.want {
			t.Errorf("%q.Bound(%v) = %v, want %v", tt.in, tt.base, got, tt.want)
		}
	}
}

func TestCompareToJSON(t *testing.T) {
	tests := []struct {
		in   string
		want CompareTo
	}{
		{`"01JC3W9Q5V1ZK2M4N6P8R0T2V4"`, CompareTo{JobID: "01JC3W9Q5V1ZK2M4N6P8R0T2V4"}},
		{`{"labels":{"branch":"main"}}`, CompareTo{Labels: map[string]string{"branch": "main"}}},
		{`{"labels":{"branch":"main"},"status":"failed"}`, CompareTo{Labels: map[string]string{"branch": "main"}, Status: StatusFailed}},
		{`{"job_id":"X1","labels":{"a":"b"}}`, CompareTo{JobID: "X1", Labels: map[string]string{"a": "b"}}},
	}
	for _, tt := range tests {
		s, err := Decode(strings.NewReader(`{"targets":[{"url":"http://127.0.0.1:1/"}],"compare_to":` + tt.in + `}`))
		if err != nil || s.CompareTo == nil {
			t.Fatalf("Decode(compare_to %s) = %v", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, *s.CompareTo); diff != "" {
			t.Errorf("Decode(compare_to %s) mismatch (-want +got):\n%s", tt.in, diff)
		}
		// What the API stores must read back the same.
		b, err := json.Marshal(s)
		var back Spec
		if err == nil {
			err = json.Unmarshal(b, &back)
		}
		if err != nil || !cmp.Equal(back.CompareTo, s.CompareTo) {
			t.Errorf("compare_to %s round trip = %+v, %v", tt.in, back.CompareTo, err)
		}
	}
	for _, bad := range []string{`42`, `["a"]`, `{"label":{"a":"b"}}`, `{"labels":"main"}`, `{"status":1}`} {
		_, err := Decode(strings.NewReader(`{"targets":[{"url":"http://127.0.0.1:1/"}],"compare_to":` + bad + `}`))
		var ve *errcode.Error
		if !errors.As(err, &ve) || !strings.HasPrefix(ve.Problems[0].Field, "compare_to") {
			t.Errorf("Decode(compare_to %s) = %v, want a problem under compare_to", bad, err)
		}
	}
}

func TestValidateCompareTo(t *testing.T) {
	base := func() Spec { return sweepSpec([]int{1}, "a") }
	tests := []struct {
		name  string
		edit  func(*Spec)
		field string // "" = valid
	}{
		{"job id", func(s *Spec) { s.CompareTo = &CompareTo{JobID: "01JC3W9Q5V1ZK2M4N6P8R0T2V4"} }, ""},
		{"selector", func(s *Spec) { s.CompareTo = &CompareTo{Labels: map[string]string{"branch": "main"}} }, ""},
		{"relative threshold with compare_to", func(s *Spec) {
			s.CompareTo, s.Thresholds = &CompareTo{JobID: "X"}, []string{"rps >= 0.95 * baseline.rps"}
		}, ""},
		{"relative threshold without compare_to", func(s *Spec) {
			s.Thresholds = []string{"rps > 1", "p99_ms <= 1.1 * baseline.p99_ms"}
		}, "thresholds[1]"},
		{"empty job id", func(s *Spec) { s.CompareTo = &CompareTo{JobID: ""} }, ""}, // defaults to the newest succeeded job
		{"blank job id", func(s *Spec) { s.CompareTo = &CompareTo{JobID: " X"} }, "compare_to"},
		{"bad status", func(s *Spec) { s.CompareTo = &CompareTo{Status: "done"} }, "compare_to.status"},
		{"bad label", func(s *Spec) { s.CompareTo = &CompareTo{Labels: map[string]string{"a b": "c"}} }, `compare_to.labels["a b"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base()
			tt.edit(&s)
			err := s.WithDefaults().Validate(Limits{}, nil)
			var ve *errcode.Error
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("Validate = %v, want nil", err)
			case tt.field != "" && (!errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != tt.field):
				t.Errorf("Validate = %v, want one problem at %s", err, tt.field)
			}
		})
	}
	if got := (Spec{CompareTo: &CompareTo{Labels: map[string]string{"b": "m"}}}).WithDefaults().CompareTo.Status; got != StatusSucceeded {
		t.Errorf("selector status default = %q, want succeeded", got)
	}
	if got := (Spec{CompareTo: &CompareTo{JobID: "X"}}).WithDefaults().CompareTo.Status; got != "" {
		t.Errorf("job id status default = %q, want none (any status)", got)
	}
}

// baselineJob is verdictRuns' shape (a and b at c = 1, 4) run earlier with
// req/s rpsA for a and rpsB for b, one repeat each.
func baselineJob(t *testing.T, rpsA, rpsB float64) *Baseline {
	t.Helper()
	s := sweepSpec([]int{1, 4}, "a", "b")
	var runs []Run
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
		{"no regression", "rps >= 0.95 * baseline.rps", nil, VerdictPass, 0}, // base set below: 110 vs 110, 300 vs 300
		{"a regressed at both c", "rps >= 0.95 * baseline.rps", baselineJob(t, 120, 300), VerdictFail, 2},
		{"within 10 %", "rps >= 0.9 * baseline.rps", baselineJob(t, 120, 300), VerdictPass, 0},
		{"scoped to b", "b: rps >= 0.95 * baseline.rps", baselineJob(t, 120, 300), VerdictPass, 0},
		{"everything regressed", "rps > baseline.rps * 1.5", baselineJob(t, 110, 300), VerdictFail, 4},
		{"latency offset", "p99_ms <= baseline.p99_ms + 1", baselineJob(t, 130, 300), VerdictFail, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, runs := verdictRuns(t, tt.threshold)
			s.CompareTo = &CompareTo{JobID: "BASE"}
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
	s.CompareTo = &CompareTo{JobID: "BASE"}
	got := AnalyzeAgainst(s, runs, baselineJob(t, 120, 300)).Verdict
	d := Duration(10e9)
	base, bound := 120.0, 114.0
	// One baseline repeat: no interval, so the means decide.
	sig := &Significance{NBase: 1, N: 3, Text: "~ -3.51 % (1 vs 3 repeats: an interval needs 2 per side)"}
	want := VerdictResult{Result: VerdictFail, Failures: []ThresholdFailure{
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
	s.CompareTo = &CompareTo{JobID: "BASE"}

	partial := baselineJob(t, 110, 300)
	partial.Spec.Sweep.Concurrency = []int{1, 8} // a and b at c = 4 never ran there
	partial.Runs = nil
	for _, c := range []int{1, 8} {
		partial.Runs = append(partial.Runs, runsFor(t, partial.Spec, "a", c, abRun(c, 110))...)
		partial.Runs = append(partial.Runs, runsFor(t, partial.Spec, "b", c, abRun(c, 300))...)
	}
	got := AnalyzeAgainst(s, runs, partial).Verdict
	if got.Result != VerdictFail || len(got.Failures) != 2 {
		t.Fatalf("verdict = %+v, want fail with the 2 cells at c = 4", got)
	}
	for _, f := range got.Failures {
		if f.Concurrency != 4 || f.Reason != "no matching cell in baseline job BASE" {
			t.Errorf("failure %+v, want c = 4 with reason %q", f, "no matching cell in baseline job BASE")
		}
	}

	renamed := baselineJob(t, 110, 300)
	renamed.Spec.Targets[1].Name = "c" // b has no counterpart
	if got := AnalyzeAgainst(s, runs, renamed).Verdict; got.Result != VerdictFail || len(got.Failures) != 2 || got.Failures[0].Target != "b" {
		t.Errorf("verdict against renamed target = %+v, want b's 2 cells failing", got)
	}

	for name, base := range map[string]*Baseline{"gone": MissingBaseline("BASE"), "not loaded": nil} {
		got := AnalyzeAgainst(s, runs, base).Verdict
		if got.Result != VerdictFail || len(got.Failures) != 1 || got.Failures[0].Point != -1 || got.Failures[0].Reason == "" {
			t.Errorf("verdict with baseline %s = %+v, want one failure with a reason", name, got)
		}
	}
}

func TestAnalyzeAgainstComparesCells(t *testing.T) {
	s, runs := verdictRuns(t)
	s.CompareTo = &CompareTo{JobID: "BASE"}
	a := AnalyzeAgainst(s, runs, baselineJob(t, 100, 300))
	if a.CompareTo == nil || a.CompareTo.JobID != "BASE" || len(a.CompareTo.Cells) != 4 {
		t.Fatalf("CompareTo = %+v, want 4 cells against BASE", a.CompareTo)
	}
	c := a.CompareTo.Cells[0] // a at c = 1: 110 against 100
	if c.BaselinePoint != 0 || c.RPS != 110 || c.BaselineRPS != 100 || c.Comparison == nil || c.Comparison.RPS != "+10.00 %" {
		t.Errorf("cell 0 = %+v, want 110 against 100 req/s, +10.00 %%", c)
	}
	if a.Verdict.Result != VerdictNone {
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
		{"within noise", []float64{80, 90, 100, 110, 120}, []float64{75, 85, 96, 105, 110}, VerdictPass},
		// means 100 and 80, apart in every repeat.
		{"significant drop", []float64{98, 99, 100, 101, 102}, []float64{78, 79, 80, 81, 82}, VerdictFail},
		// nothing below the bound: no test needed.
		{"no drop", []float64{98, 99, 100, 101, 102}, []float64{98, 99, 100, 101, 102}, VerdictPass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sweepSpec([]int{1}, "a")
			s.Thresholds = []string{"rps >= 0.95 * baseline.rps"}
			s.CompareTo = &CompareTo{JobID: "BASE"}
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
