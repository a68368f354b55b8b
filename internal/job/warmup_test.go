package job

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
)

// TestSpecWarmup: the spec's warmup reaches the plan of every run (not its
// sweep.warmup_requests run), counts in the estimate, and is refused,
// naming the field, where a point has no measured window after it.
func TestSpecWarmup(t *testing.T) {
	timed := func() Spec {
		s := validSpec()
		s.Sweep.Requests = nil
		s.Sweep.Duration = []Duration{Duration(10 * time.Second)}
		return s
	}
	tests := []struct {
		name string
		spec func() Spec
		want time.Duration // the plans'; -1: refused
	}{
		{"none", timed, 0},
		{"timed points", func() Spec { s := timed(); s.Warmup = Duration(5 * time.Second); return s }, 5 * time.Second},
		{"with warm-up requests too", func() Spec {
			s := timed()
			s.Warmup, s.Sweep.WarmupRequests = Duration(5*time.Second), 100
			return s
		}, 5 * time.Second},
		{"counted points", func() Spec { s := validSpec(); s.Warmup = Duration(5 * time.Second); return s }, -1},
		{"ab -t line", func() Spec {
			s := timed()
			s.Targets = []Target{{Name: "a", AB: "-t 10 -c 2 http://127.0.0.1:8081/"}}
			s.Sweep = Sweep{}
			s.Warmup = Duration(5 * time.Second)
			return s
		}, -1},
		{"negative", func() Spec { s := timed(); s.Warmup = Duration(-time.Second); return s }, -1},
		{"above the longest run", func() Spec { s := timed(); s.Warmup = Duration(2 * time.Hour); return s }, -1},
		{"HTTP/2", func() Spec {
			s := timed()
			s.Request.HTTPVersion = "2"
			s.Warmup = Duration(5 * time.Second)
			return s
		}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.spec()
			err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
			if tt.want < 0 {
				if got := fields(t, err); !slices.Contains(got, "warmup") {
					t.Errorf("Validate fields = %v, want warmup among them", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			s = s.WithDefaults()
			without := s
			without.Warmup = 0
			if got, base := s.Estimate(), without.Estimate(); got-base != time.Duration(len(s.Points())*s.Sweep.Repeats)*tt.want {
				t.Errorf("Estimate = %v, %v without the warm-up: want %v more per run", got, base, tt.want)
			}
			for _, p := range s.Points() {
				plan, err := s.Plan(p)
				if err != nil {
					t.Fatal(err)
				}
				if plan.Warmup != tt.want {
					t.Errorf("plan of %v: Warmup = %v, want %v", p, plan.Warmup, tt.want)
				}
				if wp, ok, err := s.WarmupPlan(p); err != nil || (ok && wp.Warmup != 0) {
					t.Errorf("warm-up requests' plan of %v: Warmup = %v, %v; want none", p, wp.Warmup, err)
				}
			}
		})
	}
}

// TestDecodeSpecWarmup: the spec's JSON names the warm-up as any duration.
func TestDecodeSpecWarmup(t *testing.T) {
	s, err := Decode(strings.NewReader(`{"targets":[{"name":"a","url":"http://127.0.0.1:8081/"}],"sweep":{"duration":["10s"]},"warmup":"5s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Warmup.Std() != 5*time.Second {
		t.Errorf("decoded warmup = %v, want 5s", s.Warmup)
	}
}

// TestABLineWarmupRefused: a job's ab line gives no warm-up of its own;
// the spec's warmup is the job's.
func TestABLineWarmupRefused(t *testing.T) {
	if _, err := parseABTarget("--warmup 5s -t 10 http://127.0.0.1:1/"); err == nil || !strings.Contains(err.Error(), `"warmup"`) {
		t.Errorf("parseABTarget(--warmup) = %v, want the refusal naming the spec's warmup", err)
	}
}
