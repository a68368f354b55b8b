package search_test

import (
	"math"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/search"
)

// simulate runs a search against a target that holds the SLO below
// capacity; flaky, when set, may overturn a probe's verdict.
func simulate(t *testing.T, cfg search.Config, capacity float64, flaky func(n int, rate float64) bool) (search.Result, []search.Probe) {
	t.Helper()
	var probes []search.Probe
	for range 200 {
		st := search.Next(cfg, probes)
		if st.Done {
			return search.Estimate(probes, st.Reason), probes
		}
		if st.Rate > cfg.MaxRate || st.Rate < cfg.MinRate {
			t.Fatalf("probe at %v outside [%v, %v]", st.Rate, cfg.MinRate, cfg.MaxRate)
		}
		passed := st.Rate < capacity
		if flaky != nil && flaky(len(probes), st.Rate) {
			passed = !passed
		}
		probes = append(probes, search.Probe{Rate: st.Rate, Passed: passed,
			Requests: int64(st.Rate * cfg.ProbeDuration.Seconds()), Elapsed: cfg.ProbeDuration})
	}
	t.Fatal("search did not end in 200 steps")
	return search.Result{}, nil
}

func TestSearchConverges(t *testing.T) {
	cfg := search.Config{MinRate: 50, MaxRate: 20000, ProbeDuration: 5 * time.Second}
	for _, capacity := range []float64{51, 99, 800, 1234, 12400, 19999} {
		res, probes := simulate(t, cfg, capacity, nil)
		if res.Reason != search.Converged {
			t.Errorf("capacity %v: reason %s, want converged", capacity, res.Reason)
			continue
		}
		if res.Low >= capacity || res.High < capacity {
			t.Errorf("capacity %v: bracket [%v, %v] does not hold it", capacity, res.Low, res.High)
		}
		if res.High > res.Low*(1+search.DefaultPrecision) {
			t.Errorf("capacity %v: bracket [%v, %v] wider than %v", capacity, res.Low, res.High, search.DefaultPrecision)
		}
		if math.Abs(res.Rate/capacity-1) > search.DefaultPrecision {
			t.Errorf("capacity %v: rate %v", capacity, res.Rate)
		}
		if len(probes) > 25 {
			t.Errorf("capacity %v: %d probes, want at most 25", capacity, len(probes))
		}
		t.Logf("capacity %v: %.0f [%.0f, %.0f] in %d probes, %d requests", capacity, res.Rate, res.Low, res.High, res.Probes, res.Requests)
	}
}

func TestSearchEnds(t *testing.T) {
	cfg := search.Config{MinRate: 50, MaxRate: 1000, ProbeDuration: time.Second}
	cases := []struct {
		name      string
		cfg       search.Config
		capacity  float64
		reason    search.Reason
		low, high float64
	}{
		{"passes at max_rate", cfg, 5000, search.AtMaxRate, 1000, 0},
		{"fails at min_rate", cfg, 10, search.BelowMinRate, 0, 50},
		{"out of time", withBudget(cfg, 3*time.Second, 0), 700, search.Budget, 200, 0},
		{"noise at min_rate", cfg, 700, search.Converged, 0, 0},
		{"out of requests", withBudget(cfg, 0, 50+100+200+400), 700, search.Budget, 400, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var flaky func(int, float64) bool
			if c.name == "noise at min_rate" {
				flaky = func(n int, _ float64) bool { return n == 0 }
			}
			res, probes := simulate(t, c.cfg, c.capacity, flaky)
			if c.reason == search.Converged {
				if res.Reason != c.reason || res.Low >= c.capacity || res.High < c.capacity {
					t.Errorf("Estimate = %s [%v, %v], want converged around %v", res.Reason, res.Low, res.High, c.capacity)
				}
				return
			}
			if res.Reason != c.reason || res.Low != c.low || res.High != c.high {
				t.Errorf("Estimate = %s [%v, %v], want %s [%v, %v]", res.Reason, res.Low, res.High, c.reason, c.low, c.high)
			}
			var sent int64
			var spent time.Duration
			for _, p := range probes {
				sent, spent = sent+p.Requests, spent+p.Elapsed
			}
			if c.cfg.MaxRequests > 0 && sent > c.cfg.MaxRequests || c.cfg.MaxDuration > 0 && spent > c.cfg.MaxDuration {
				t.Errorf("spent %d requests and %s, over the budget", sent, spent)
			}
		})
	}
}

func withBudget(c search.Config, d time.Duration, n int64) search.Config {
	c.MaxDuration, c.MaxRequests = d, n
	return c
}

// A saturated load generator ends the search, and its probe's rate is
// not reported as the server's: the estimate stays at the last pass.
func TestSearchStopsOnClientSaturation(t *testing.T) {
	cfg := search.Config{MinRate: 50, MaxRate: 20000}
	probes := []search.Probe{{Rate: 50, Passed: true}, {Rate: 100, Passed: true}, {Rate: 200, Passed: false, ClientSaturated: true}}
	st := search.Next(cfg, probes)
	if !st.Done || st.Reason != search.ClientSaturated {
		t.Fatalf("Next = %+v, want done: client_saturated", st)
	}
	res := search.Estimate(probes, st.Reason)
	if res.Rate != 100 || res.High != 0 {
		t.Errorf("Estimate = %v [%v, %v], want 100 with no upper edge", res.Rate, res.Low, res.High)
	}
}

// One probe failing by noise well below capacity is outvoted by its
// repeats, and the search still brackets the capacity.
func TestSearchOutvotesANoisyProbe(t *testing.T) {
	cfg := search.Config{MinRate: 50, MaxRate: 20000, ProbeDuration: time.Second}
	for _, noisy := range []int{3, 8, 10, 12} {
		res, _ := simulate(t, cfg, 800, func(n int, _ float64) bool { return n == noisy })
		if res.Reason != search.Converged || res.Low >= 800 || res.High < 800 {
			t.Errorf("noise at probe %d: %s [%v, %v], want converged around 800", noisy, res.Reason, res.Low, res.High)
		}
	}
}

// Next depends on the probes alone: a search resumed from a prefix of its
// probes takes the step the first attempt took.
func TestSearchResumes(t *testing.T) {
	cfg := search.Config{MinRate: 50, MaxRate: 20000}
	_, probes := simulate(t, cfg, 1234, nil)
	for i := range probes {
		if got := search.Next(cfg, probes[:i]); got.Rate != probes[i].Rate {
			t.Fatalf("Next(probes[:%d]).Rate = %v, want %v", i, got.Rate, probes[i].Rate)
		}
	}
}
