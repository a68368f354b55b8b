package job

import (
	"slices"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
)

func searchSpec() Spec {
	s := validSpec()
	s.Search = &Search{SLO: []string{"p99_ms < 50", "failed_ratio < 0.01"}, MinRate: 50, MaxRate: 20000}
	return s
}

func TestValidateSearch(t *testing.T) {
	if err := searchSpec().Validate(DefaultLimits(), testservers.LoopbackOnly); err != nil {
		t.Fatalf("Validate(valid search) = %v, want nil", err)
	}
	tests := []struct {
		name   string
		mutate func(s *Search)
		want   []string
	}{
		{"no slo", func(s *Search) { s.SLO = nil }, []string{"search.slo"}},
		{"unknown metric", func(s *Search) { s.SLO[1] = "p42_ms < 5" }, []string{"search.slo[1]"}},
		{"scoped to a target", func(s *Search) { s.SLO[0] = "a: p99_ms < 50" }, []string{"search.slo[0]"}},
		{"relative", func(s *Search) { s.SLO[0] = "p99_ms < baseline.p99_ms" }, []string{"search.slo[0]"}},
		{"no min_rate", func(s *Search) { s.MinRate = 0 }, []string{"search.min_rate"}},
		{"max below min", func(s *Search) { s.MaxRate = 10 }, []string{"search.max_rate"}},
		{"max over limit", func(s *Search) { s.MaxRate = 1e9 }, []string{"search.max_rate"}},
		{"probe too short", func(s *Search) { s.ProbeDuration = Duration(100 * time.Millisecond) }, []string{"search.probe_duration"}},
		{"budget under a probe", func(s *Search) { s.MaxDuration = Duration(2 * time.Second) }, []string{"search.max_duration"}},
		{"budget over limit", func(s *Search) { s.MaxDuration = Duration(2 * time.Hour) }, []string{"search.max_duration"}},
		{"negative requests", func(s *Search) { s.MaxRequests = -1 }, []string{"search.max_requests"}},
		{"concurrency over limit", func(s *Search) { s.Concurrency = 1 << 20 }, []string{"search.concurrency"}},
		{"precision above 1", func(s *Search) { s.Precision = 2 }, []string{"search.precision"}},
		{"confirm too many", func(s *Search) { s.Confirm = 10 }, []string{"search.confirm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := searchSpec()
			se := *s.Search
			se.SLO = slices.Clone(se.SLO)
			tt.mutate(&se)
			s.Search = &se
			err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
			if got := fields(t, err); !slices.Equal(got, tt.want) {
				t.Errorf("Validate fields = %v, want %v (%v)", got, tt.want, err)
			}
		})
	}
}

func TestSearchDefaultsAndEstimate(t *testing.T) {
	s := searchSpec()
	d := s.WithDefaults()
	want := Search{SLO: s.Search.SLO, MinRate: 50, MaxRate: 20000,
		ProbeDuration: Duration(5 * time.Second), MaxDuration: Duration(5 * time.Minute),
		Concurrency: 1000, Precision: 0.05, Confirm: 3}
	if !equalSearch(*d.Search, want) {
		t.Errorf("WithDefaults().Search = %+v, want %+v", *d.Search, want)
	}
	without := validSpec().Estimate()
	// Two targets, each at most 40 probes of 5 s, a 30 s timeout and 1 s
	// overhead.
	if got, add := s.Estimate(), 2*40*36*time.Second; got != without+add {
		t.Errorf("Estimate = %v, want %v + %v", got, without, add)
	}
}

func equalSearch(a, b Search) bool {
	return slices.Equal(a.SLO, b.SLO) && a.MinRate == b.MinRate && a.MaxRate == b.MaxRate &&
		a.ProbeDuration == b.ProbeDuration && a.MaxDuration == b.MaxDuration && a.MaxRequests == b.MaxRequests &&
		a.Concurrency == b.Concurrency && a.Precision == b.Precision && a.Confirm == b.Confirm
}

func TestProbeKey(t *testing.T) {
	for _, c := range []struct{ target, n int }{{0, 0}, {0, 7}, {3, 12}} {
		k := ProbeKey(c.target, c.n)
		if tg, n, ok := k.Probe(); !ok || tg != c.target || n != c.n || k.Point >= 0 {
			t.Errorf("ProbeKey(%d, %d) = %v reads back as %d, %d, %v", c.target, c.n, k, tg, n, ok)
		}
	}
	if _, _, ok := (RunKey{Point: 0, Repeat: 3}).Probe(); ok {
		t.Error("a sweep's run key reads as a probe")
	}
}

// TestSearchAbortRules: a probe is judged while it goes on the SLO's
// counts and ratios under an upper bound, each as the spec wrote it,
// ending that probe only; latencies and lower bounds wait for its end.
func TestSearchAbortRules(t *testing.T) {
	s := Search{SLO: []string{"p99_ms < 50", "failed_ratio < 0.01", "non_2xx <= 3", "rps > 100", "failed_ratio>0.5"}}
	var got []string
	for _, r := range s.AbortRules() {
		got = append(got, r.Text)
		if r.Scope != AbortRun || r.After != DefaultAbortAfter {
			t.Errorf("rule %q: scope %q after %d, want %q after %d", r.Text, r.Scope, r.After, AbortRun, DefaultAbortAfter)
		}
	}
	if want := []string{"failed_ratio < 0.01", "non_2xx <= 3"}; !slices.Equal(got, want) {
		t.Errorf("AbortRules = %q, want %q", got, want)
	}
}
