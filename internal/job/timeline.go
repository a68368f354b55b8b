package job

import (
	"time"

	"github.com/benchq/benchq/internal/abcmd"
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

// warmup checks the spec's warmup against every point: the measured
// window is the duration after it, so a point that stops after a count of
// requests has none, and the engine's HTTP/2 path keeps no window.
func (v *validator) warmup(s Spec, res []resolved) {
	d := s.Warmup.Std()
	switch {
	case d == 0:
		return
	case d < 0 || d > v.lim.MaxDuration:
		v.add("warmup", "%v is outside 0s..%v", s.Warmup, v.lim.MaxDuration)
		return
	}
	per := s.axesOf(res)
	if pointCount(per) > v.lim.MaxPoints {
		return // cells reports it
	}
	for _, c := range s.expand(per) {
		if c.Requests > 0 || c.Duration <= 0 {
			implied := ""
			if c.Requests == abcmd.TimeLimitRequests && c.Duration > 0 {
				implied = " (ab's -t implies -n 50000: use a url target with sweep.duration)"
			}
			v.add("warmup", "needs every point to run for a duration with no request count (the measured window is the duration after the warm-up), but %s gives %d requests%s", c.stopField, c.Requests, implied)
			break
		}
	}
	for i, r := range res {
		if len(r.errs) == 0 && r.src.req.HTTPVersion == measure.HTTP2 {
			v.add("warmup", "is not supported on HTTP/2 (targets[%d])", i)
			break
		}
	}
}
