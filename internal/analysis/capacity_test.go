package analysis_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/search"
)

func capacitySpec() job.Spec {
	return job.Spec{
		Targets: []job.Target{{Name: "apache", URL: "http://127.0.0.1:8081/"}, {Name: "lighttpd", URL: "http://127.0.0.1:8082/"}},
		Search:  &job.Search{SLO: []string{"p99_ms < 50", "failed_ratio < 0.01"}, MinRate: 50, MaxRate: 20000, ProbeDuration: job.Duration(time.Second)},
	}
}

// probeRun is a probe at rate against a server of capacity: below it the
// p99 is 5 ms, above it the line grows to 900 ms.
func probeRun(target, n int, rate, capacity float64, saturated bool) job.Run {
	p99 := 5.0
	if rate >= capacity {
		p99 = 900
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
	return job.Run{RunKey: job.ProbeKey(target, n), StartedAt: start, FinishedAt: start.Add(time.Second),
		Result: &abreport.Report{CompleteRequests: int64(rate), ClientSaturated: saturated,
			PercentilesMs: abreport.Percentiles{P50: 2, P99: p99},
			OpenModel:     &abreport.OpenModel{RequestedRate: rate, AchievedRate: rate}}}
}

// searchRuns runs the search the worker would against a simulated target.
func searchRuns(t *testing.T, s job.Spec, target int, capacity float64, saturateAt float64) []job.Run {
	t.Helper()
	cfg := s.Search.Config()
	var runs []job.Run
	var probes []search.Probe
	for range 100 {
		st := search.Next(cfg, probes)
		if st.Done {
			return runs
		}
		r := probeRun(target, len(runs), st.Rate, capacity, saturateAt > 0 && st.Rate >= saturateAt)
		runs = append(runs, r)
		slo, _ := s.Search.SLOs()
		probes = append(probes, analysis.SearchProbe(slo, r))
	}
	t.Fatal("search did not end")
	return nil
}

func TestCapacityComparesTargets(t *testing.T) {
	s := capacitySpec()
	runs := append(searchRuns(t, s, 0, 8900, 0), searchRuns(t, s, 1, 12400, 0)...)
	a := analysis.Analyze(s, runs)
	if len(a.Capacity) != 2 {
		t.Fatalf("capacity = %+v, want two targets", a.Capacity)
	}
	for i, want := range []float64{8900, 12400} {
		c := a.Capacity[i]
		if c.Reason != "converged" || c.CILow >= want || c.CIHigh < want || math.Abs(c.Rate/want-1) > 0.05 {
			t.Errorf("%s: %v [%v, %v] %s, want about %v", c.Target, c.Rate, c.CILow, c.CIHigh, c.Reason, want)
		}
		if len(c.Probes) == 0 || c.Requests == 0 || c.ElapsedS != float64(len(c.Probes)) {
			t.Errorf("%s: %d probes, %d requests, %v s", c.Target, len(c.Probes), c.Requests, c.ElapsedS)
		}
	}
	light := a.Capacity[1]
	if light.Baseline != "apache" || light.Pct == nil || math.Abs(*light.Pct-39.3) > 5 || a.Capacity[0].Pct != nil {
		t.Errorf("lighttpd vs apache = %v %v, want about +39 %% against apache", light.Baseline, light.Pct)
	}
	for _, part := range []string{"apache sustains 8 ", " req/s [8 ", " at p99_ms < 50 and failed_ratio < 0.01; lighttpd 12 ", ", +"} {
		if !strings.Contains(a.CapacitySentence, part) {
			t.Errorf("sentence %q lacks %q", a.CapacitySentence, part)
		}
	}
	t.Log(a.CapacitySentence)
}

// A saturated load generator ends the search, and what it reached is not
// reported as the server's capacity: the last pass, 1600, lowered by what
// a 1 s probe cannot see under the p99's 45 ms of slack (4.5 %).
func TestCapacityStopsOnClientSaturation(t *testing.T) {
	s := capacitySpec()
	s.Targets = s.Targets[:1]
	a := analysis.Analyze(s, searchRuns(t, s, 0, 12400, 3000))
	c := a.Capacity[0]
	if c.Reason != "client_saturated" || c.LimitedBy != "client" || c.CIHigh != 0 || c.Rate >= 3000 {
		t.Errorf("capacity = %v [%v, %v] %s limited by %q, want the last pass below 3000, client_saturated", c.Rate, c.CILow, c.CIHigh, c.Reason, c.LimitedBy)
	}
	if !strings.Contains(a.CapacitySentence, "at least 1 530 req/s (the load generator saturated above it)") {
		t.Errorf("sentence = %q", a.CapacitySentence)
	}
}

func TestCapacityIncompleteAndDead(t *testing.T) {
	s := capacitySpec()
	s.Targets = s.Targets[:1]
	runs := searchRuns(t, s, 0, 1000, 0)[:3] // canceled after three probes
	dead := probeRun(0, 3, 400, 1000, false)
	dead.Result.CompleteRequests, dead.Result.FailedRequests = 0, 400
	c := analysis.Analyze(s, append(runs, dead)).Capacity[0]
	if c.Reason != analysis.ReasonIncomplete || c.Probes[3].Passed || !strings.Contains(strings.Join(c.Probes[3].Failed, ","), "no_success") {
		t.Errorf("capacity = %+v, want incomplete with the dead probe failed", c)
	}
}

func TestThousands(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 51.4: "51", 999: "999", 1234: "1 230", 12437: "12 400", 800: "800", 1234567: "1 230 000"} {
		if got := analysis.Thousands(v); got != want {
			t.Errorf("Thousands(%v) = %q, want %q", v, got, want)
		}
	}
}
