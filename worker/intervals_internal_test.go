package worker

import (
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
)

// TestIntervalFeedBounded feeds a 10-hour run's 250 ms intervals (144 000,
// as a long run's coarsened ones would be fewer) through the feed, taken
// every 250 ms as the progress writer does: at most maxIntervalEvents
// events while it runs, never two within a second but to send what was
// due in events of at most maxEventIntervals, and the run's end sends the
// rest, every interval once and in order.
func TestIntervalFeedBounded(t *testing.T) {
	var f intervalFeed
	add := f.begin(job.RunKey{}, job.Point{Target: "a", Concurrency: 1}, measure.Plan{}, 1)
	began := f.began
	const step = 250 * time.Millisecond
	const n = 10 * 3600 * 4
	events, got := 0, 0
	var last time.Time
	take := func(now time.Time) {
		for {
			rest := f.draining // the rest of what was due goes at once
			ev, ok := f.take(now)
			if !ok {
				return
			}
			events++
			if !last.IsZero() && now.Sub(last) < time.Second && !f.ended && !rest {
				t.Fatalf("two events %v apart", now.Sub(last))
			}
			last = now
			for _, p := range ev.Intervals {
				if want := float64(got) * step.Seconds(); p.TS != want {
					t.Fatalf("interval %d at t_s %v, want %v", got, p.TS, want)
				}
				got++
			}
		}
	}
	for i := range n {
		add(measure.ClosedInterval{Length: step, Index: i, Interval: measure.Interval{Requests: 1}})
		take(began.Add(time.Duration(i+1) * step))
	}
	running := events
	f.end()
	take(began.Add(n * step))
	if running > maxIntervalEvents || got != n {
		t.Errorf("%d events while the run went (cap %d), %d of %d intervals sent", running, maxIntervalEvents, got, n)
	}
	if events-running > n/maxEventIntervals+1 || events-running == 0 {
		t.Errorf("the end sent %d events", events-running)
	}
	t.Logf("%d events while running, %d at the end", running, events-running)
}
