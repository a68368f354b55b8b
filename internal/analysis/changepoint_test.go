package analysis

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
)

// testbedHistory is one job per rps value, oldest first, each with target
// a at c = 1 measured on tb (two repeats 0.5 % apart, so the cells have a
// spread), an hour apart.
func testbedHistory(t *testing.T, first int, tb job.Testbed, rps ...float64) []TrendJob {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var out []TrendJob
	for i, v := range rps {
		n := first + i
		s := jobtest.SweepSpec([]int{1}, "a")
		s.Labels = map[string]string{job.LabelTemplate: "checkout", job.LabelCommit: fmt.Sprintf("c%02d", n)}
		runs := runsFor(t, s, "a", 1, abRun(1, v), abRun(1, v*1.005))
		for k := range runs {
			b := tb
			runs[k].Testbed = &b
		}
		out = append(out, TrendJob{Baseline: Baseline{JobID: fmt.Sprintf("j%02d", n), Spec: s, Runs: runs},
			CreatedAt: t0.Add(time.Duration(n) * time.Hour), Verdict: job.VerdictPass})
	}
	return out
}

// wobble is v with a small deterministic noise per index (±1 %).
func wobble(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v * (1 + 0.01*float64((i*7)%5-2)/2)
	}
	return out
}

// TestChangePointsKeyedByTestbed: twelve jobs measured on testbed A at
// about 100 req/s, then six on testbed B, a slower machine, at about 80.
// Each testbed's series is flat, so no change point is reported unless
// the series are asked for across testbeds, where the slower machine
// reads as a 20 % drop at its first job.
func TestChangePointsKeyedByTestbed(t *testing.T) {
	a := job.Testbed{CPUModel: "AMD EPYC 7B13", Cores: 2, Kernel: "6.8.0", Version: "v1", Pool: "a"}
	b := job.Testbed{CPUModel: "Intel Xeon E5-2680", Cores: 2, Kernel: "6.8.0", Version: "v1", Pool: "b"}
	jobs := append(testbedHistory(t, 0, a, wobble(100, 12)...), testbedHistory(t, 12, b, wobble(80, 6)...)...)
	q := ChangeQuery{Template: "checkout", Metric: "rps", MaxPValue: job.DefaultChangeMaxPValue, MinMagnitude: job.DefaultChangeMinMagnitude}
	now := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

	split := SplitSeries(q, TrendSeries("rps", "", jobs))
	if len(split) != 2 || len(split[0].Points) != 12 || len(split[1].Points) != 6 ||
		split[0].Testbed != a.ID() || split[1].Testbed != b.ID() || !strings.HasSuffix(split[0].Name, "testbed="+a.ID()) {
		t.Fatalf("SplitSeries = %d series %+v, want testbed A's 12 points apart from B's 6", len(split), split)
	}
	if got := ChangePoints(q, jobs, now); len(got) != 0 {
		t.Errorf("ChangePoints per testbed = %+v, want none: each testbed's series is flat", got)
	}
	q.Testbed = b.ID()
	if got := ChangePoints(q, jobs, now); len(got) != 0 {
		t.Errorf("ChangePoints of testbed B = %+v, want none", got)
	}
	q.Testbed = TestbedAny
	got := ChangePoints(q, jobs, now)
	if len(got) != 1 {
		t.Fatalf("ChangePoints across testbeds = %+v, want the one shift at B's first job", got)
	}
	cp := got[0]
	if cp.JobID != "j12" || cp.Commit != "c12" || cp.Testbed != TestbedAny || cp.Metric != "rps" || cp.Target != "a" ||
		cp.Magnitude > -0.15 || cp.Magnitude < -0.25 || cp.PValue > job.DefaultChangeMaxPValue || !cp.DetectedAt.Equal(now) {
		t.Errorf("change point = %+v, want at j12 (c12), about -20 %%, p <= 0.001", cp)
	}
	if want := []string{"j10", "j11", "j12", "j13", "j14"}; !slices.Equal(cp.Near, want) {
		t.Errorf("Near = %v, want %v", cp.Near, want)
	}
}

// TestChangePointAtTheShift: one testbed, twelve jobs at about 100 req/s
// then eight 20 % slower: the change point names the first slow job, with
// the means around it; a cell whose runs ran on two testbeds is kept out
// of the series.
func TestChangePointAtTheShift(t *testing.T) {
	a := job.Testbed{CPUModel: "AMD EPYC 7B13", Cores: 2}
	jobs := append(testbedHistory(t, 0, a, wobble(100, 12)...), testbedHistory(t, 12, a, wobble(80, 8)...)...)
	mixed := testbedHistory(t, 20, a, 40)
	mixed[0].Runs[1].Testbed = &job.Testbed{CPUModel: "other"}
	jobs = append(jobs, mixed...)
	q := ChangeQuery{Template: "checkout", Branch: "main", Metric: "rps", MaxPValue: 0.001, MinMagnitude: 0.05}
	got := ChangePoints(q, jobs, time.Now())
	if len(got) != 1 || got[0].JobID != "j12" {
		t.Fatalf("ChangePoints = %+v, want one at j12", got)
	}
	cp := got[0]
	if cp.Before < 99 || cp.Before > 101.5 || cp.After < 79 || cp.After > 81.5 || cp.Series != "checkout@main a c=1 t=10s rps testbed="+a.ID() {
		t.Errorf("change point = %+v, want before ~100.25, after ~80.2 in series of testbed %s", cp, a.ID())
	}
	if pts := TrendSeries("rps", "", jobs); pts[len(pts)-1].Testbed != job.TestbedMixed {
		t.Errorf("testbed of a cell measured on two testbeds = %q, want %q", pts[len(pts)-1].Testbed, job.TestbedMixed)
	}
}

func TestChangeMetrics(t *testing.T) {
	s := jobtest.SweepSpec([]int{1}, "a")
	s.Thresholds = []job.ThresholdEntry{{Threshold: "p95_ms < 100"}, {Threshold: "rps > 10"}}
	s.Trend = &job.Trend{Metric: "mean", MaxIncreasePct: pct(10)}
	if got, want := ChangeMetrics(s), []string{"rps", "p50_ms", "p99_ms", "failed_ratio", "p95_ms", "mean_ms"}; !slices.Equal(got, want) {
		t.Errorf("ChangeMetrics = %v, want %v", got, want)
	}
}
