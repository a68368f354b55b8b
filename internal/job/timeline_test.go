package job

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
)

// TestSpecTimelineInterval: a spec's timeline interval reaches the plan of
// every run, and one below the engine's shortest is refused, the field
// named.
func TestSpecTimelineInterval(t *testing.T) {
	tests := []struct {
		name     string
		timeline *Timeline
		want     time.Duration // the plan's; -1: refused
	}{
		{"none", nil, 0},
		{"no interval", &Timeline{}, 0},
		{"250ms", &Timeline{Interval: Duration(250 * time.Millisecond)}, 250 * time.Millisecond},
		{"the shortest", &Timeline{Interval: Duration(100 * time.Millisecond)}, 100 * time.Millisecond},
		{"too short", &Timeline{Interval: Duration(99 * time.Millisecond)}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			s.Timeline = tt.timeline
			err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
			if tt.want < 0 {
				if got := fields(t, err); !slices.Equal(got, []string{"timeline.interval"}) {
					t.Errorf("Validate fields = %v, want [timeline.interval]", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			for _, p := range s.Points() {
				plan, err := s.Plan(p)
				if err != nil {
					t.Fatal(err)
				}
				if plan.TimelineInterval != tt.want {
					t.Errorf("plan of %v: TimelineInterval = %v, want %v", p, plan.TimelineInterval, tt.want)
				}
			}
		})
	}
}

// TestDecodeSpecTimeline: the spec's JSON names the interval as any
// duration in a spec.
func TestDecodeSpecTimeline(t *testing.T) {
	s, err := Decode(strings.NewReader(`{"targets":[{"name":"a","url":"http://127.0.0.1:8081/"}],"sweep":{"requests":[10]},"timeline":{"interval":"250ms"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Timeline == nil || s.Timeline.Interval.Std() != 250*time.Millisecond {
		t.Errorf("decoded timeline = %+v, want an interval of 250ms", s.Timeline)
	}
}

// TestABLineTimelineRefused: a job's ab line cannot write a file on the
// worker; its runs keep their timelines anyway.
func TestABLineTimelineRefused(t *testing.T) {
	for _, line := range []string{"--timeline /tmp/t.ndjson -n 10 http://127.0.0.1:1/", "--timeline=/tmp/t -n 10 http://127.0.0.1:1/"} {
		if _, err := parseABTarget(line); err == nil || !strings.Contains(err.Error(), "--timeline writes a file on the server") {
			t.Errorf("parseABTarget(%q) = %v, want the --timeline refusal", line, err)
		}
	}
}
