package analysis

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
)

// abRun is a closed-model run at concurrency c and rps req/s, with ab's
// time per request c·1000/rps; rps 0 is a run where nothing completed.
func abRun(c int, rps float64) *abreport.Report {
	if rps == 0 {
		return &abreport.Report{ConcurrencyLevel: c}
	}
	return &abreport.Report{
		ConcurrencyLevel: c, RequestsPerSecond: rps, TimePerRequestMs: float64(c) * 1000 / rps,
		CompleteRequests: int64(rps * 10),
		PercentilesMs:    abreport.Percentiles{P50: float64(c) * 500 / rps, P99: float64(c) * 2000 / rps},
	}
}

// runsFor places one report per repeat on the spec's point of target and
// concurrency; it fails the test when no such point exists.
func runsFor(t *testing.T, s job.Spec, target string, c int, reports ...*abreport.Report) []job.Run {
	t.Helper()
	for _, p := range s.Points() {
		if p.Target == target && p.Concurrency == c {
			runs := make([]job.Run, len(reports))
			for i, r := range reports {
				runs[i] = job.Run{RunKey: job.RunKey{Point: p.Index, Repeat: i}, Target: target, Concurrency: c, Result: r}
			}
			return runs
		}
	}
	t.Fatalf("no point for %s at c = %d", target, c)
	return nil
}

// series runs target once per concurrency with the given req/s.
func series(t *testing.T, s job.Spec, target string, rps ...float64) []job.Run {
	t.Helper()
	var runs []job.Run
	for i, c := range s.Sweep.Concurrency {
		runs = append(runs, runsFor(t, s, target, c, abRun(c, rps[i]))...)
	}
	return runs
}

func TestAnalyzePointStatistics(t *testing.T) {
	s := jobtest.SweepSpec([]int{4}, "a", "b")
	s.Sweep.Repeats = 3
	runs := runsFor(t, s, "a", 4, abRun(4, 100), abRun(4, 110), abRun(4, 120))
	runs[1].Result.FailedRequests = 100 // of 1100 complete + 100 failed
	runs[1].Result.Failed.Connect = 100
	runs[2].Result.Non2xxResponses = 120 // of 1200 complete
	runs = append(runs, runsFor(t, s, "b", 4, abRun(4, 50), abRun(4, 150))...)

	a := Analyze(s, runs)
	if len(a.Points) != 2 {
		t.Fatalf("Analyze points = %d, want 2", len(a.Points))
	}
	pa, pb := a.Points[0], a.Points[1]
	if pa.Runs != 3 || pa.RPS.N != 3 || pa.RPS.Mean != 110 || !near(pa.RPS.SD, 10) || pa.Noisy {
		t.Errorf("point a rps = %+v (runs %d, noisy %v), want n 3, mean 110, sd 10, not noisy", pa.RPS, pa.Runs, pa.Noisy)
	}
	// time per request: 40, 36.36…, 33.33… ms.
	if want := (40 + 4000.0/110 + 4000.0/120) / 3; !near(pa.TimePerRequestMs.Mean, want) {
		t.Errorf("point a time per request mean = %v, want %v", pa.TimePerRequestMs.Mean, want)
	}
	if want := (1.0 / 12) / 3; !near(pa.FailedRatio.Mean, want) || pa.FailedRatio.Max != 1.0/12 {
		t.Errorf("point a failed ratio = %+v, want mean %v, max 1/12", pa.FailedRatio, want)
	}
	if want := 0.1 / 3; !near(pa.Non2xxRatio.Mean, want) {
		t.Errorf("point a non-2xx ratio mean = %v, want %v", pa.Non2xxRatio.Mean, want)
	}
	if got := pa.PercentilesMs["50"]; got.N != 3 || !near(got.Min, 2000.0/120) || len(pa.PercentilesMs) != 11 || pa.PercentilesMs["99.9"].N != 0 {
		t.Errorf("point a p50 = %+v of %d keys, want n 3, min %v, 11 keys (no tail without a histogram)", got, len(pa.PercentilesMs), 2000.0/120)
	}
	// b: 50 and 150 → sd 70.7, cv 0.707.
	if !pb.Noisy || !near(pb.RPS.CV, 70.71067811865476/100) {
		t.Errorf("point b rps = %+v noisy %v, want cv 0.7071 and noisy", pb.RPS, pb.Noisy)
	}
	if a.Saturation != nil || a.Verdict.Result != job.VerdictNone || pa.Comparison != nil {
		t.Errorf("Analyze = saturation %v, verdict %+v, comparison %v; want none of them", a.Saturation, a.Verdict, pa.Comparison)
	}
}

func TestAnalyzeDeterministicAndSkipsStrayRuns(t *testing.T) {
	s := jobtest.SweepSpec([]int{1, 2, 4}, "a", "b")
	s.Baseline, s.Thresholds = "a", job.Thresholds("rps > 150")
	runs := append(series(t, s, "a", 100, 190, 210), series(t, s, "b", 120, 200, 150)...)
	want := Analyze(s, runs)
	reversed := make([]job.Run, 0, len(runs)+2)
	for i := len(runs) - 1; i >= 0; i-- {
		reversed = append(reversed, runs[i])
	}
	reversed = append(reversed, job.Run{RunKey: job.RunKey{Point: 99}, Result: abRun(1, 5)}, job.Run{RunKey: job.RunKey{Point: 0, Repeat: 7}})
	got := Analyze(s, reversed)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Analyze(reversed runs + strays) differs from Analyze(runs):\n%+v\n%+v", got, want)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("json.Marshal(Analysis) = %v, want nil", err)
	}
}

func TestAnalyzePointsNotRunYet(t *testing.T) {
	s := jobtest.SweepSpec([]int{1, 2}, "a", "b")
	s.Baseline, s.Thresholds = "a", job.Thresholds("rps > 50")
	a := Analyze(s, runsFor(t, s, "a", 1, abRun(1, 100)))
	if len(a.Points) != 4 || a.Points[0].Runs != 1 || a.Points[1].Runs != 0 || a.Points[1].RPS != (job.Stat{}) {
		t.Fatalf("Analyze(one run of four points) points = %+v, want 4 with only the first run", a.Points)
	}
	if a.Points[1].Comparison != nil || a.Saturation != nil || a.Verdict.Result != job.VerdictPass {
		t.Errorf("Analyze(one run) = comparison %v, saturation %v, verdict %+v; want none, none, pass on what ran",
			a.Points[1].Comparison, a.Saturation, a.Verdict)
	}
}

// Nothing measured is null in JSON, not a 0 that reads as a measurement;
// what was measured keeps its numbers, 0 included.
func TestStatJSONNullWhenNothingMeasured(t *testing.T) {
	tests := []struct {
		name string
		st   job.Stat
		want string
	}{
		{"not run", job.Stat{}, `{"n":0,"mean":null,"sd":null,"min":null,"max":null,"cv":null}`},
		{"measured zero", newStat([]float64{0}), `{"n":1,"mean":0,"sd":0,"min":0,"max":0,"cv":0}`},
		{"measured", newStat([]float64{1, 3}), `{"n":2,"mean":2,"sd":1.4142135623730951,"min":1,"max":3,"cv":0.7071067811865476}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.st)
			if err != nil || string(b) != tt.want {
				t.Errorf("Marshal = %s, %v; want %s", b, err, tt.want)
			}
			var back job.Stat
			if err := json.Unmarshal(b, &back); err != nil || back != tt.st {
				t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", b, back, err, tt.st)
			}
		})
	}
	// A point of the spec with no run yet (or canceled before it ran).
	a := Analyze(jobtest.SweepSpec([]int{1}, "a"), nil)
	b, err := json.Marshal(a.Points[0])
	if err != nil || !strings.Contains(string(b), `"rps":{"n":0,"mean":null`) || !strings.Contains(string(b), `"99.99":{"n":0,"mean":null`) {
		t.Errorf("unrun point = %s, %v; want null req/s and percentiles", b, err)
	}
}
