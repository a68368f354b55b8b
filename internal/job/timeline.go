package job

import (
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// Timeline sets how a run's timeline is cut: every run records one, in
// intervals of Interval (default 1s, at least 100ms), each with its
// requests, failures, bytes and latency percentiles.
type Timeline struct {
	Interval Duration `json:"interval,omitempty" example:"250ms"`
}

// interval is the plan's TimelineInterval: zero (the engine's default)
// when the spec names none.
func (t *Timeline) interval() time.Duration {
	if t == nil {
		return 0
	}
	return t.Interval.Std()
}

func (v *validator) timeline(t *Timeline) {
	if d := t.interval(); d != 0 && d < measure.MinTimelineInterval {
		v.add("timeline.interval", "%v is shorter than the shortest interval, %v", d, measure.MinTimelineInterval)
	}
}
