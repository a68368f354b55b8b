package testservers

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// LatencyStep is one step of a ScheduledLatency target: for For, every
// request is answered after Delay.
type LatencyStep struct {
	For, Delay time.Duration
}

// ScheduledLatency is a fasthttp target whose latency changes on a
// schedule: a run's timeline must show each step in its intervals.
type ScheduledLatency struct {
	URL   string
	steps []LatencyStep
	zero  atomic.Int64 // the schedule's time zero, Unix ns; 0 until Begin
	// onFirst: the first request to arrive begins the schedule.
	onFirst atomic.Bool
}

// StartSlowStretch is the schedule the timeline's tests share: answers in
// 1 ms for 2 s, in 20 ms for the next 2 s, then in 1 ms again.
func StartSlowStretch(t testing.TB) *ScheduledLatency {
	t.Helper()
	return StartScheduledLatency(t,
		LatencyStep{For: 2 * time.Second, Delay: time.Millisecond},
		LatencyStep{For: 2 * time.Second, Delay: 20 * time.Millisecond},
		LatencyStep{For: time.Hour, Delay: time.Millisecond})
}

// StartScheduledLatency serves "ok" on a free 127.0.0.1 port until the test
// ends, each answer delayed by the step of the schedule its request arrived
// in: the first step's delay before Begin, the last one's after the last
// step.
func StartScheduledLatency(t testing.TB, steps ...LatencyStep) *ScheduledLatency {
	t.Helper()
	if len(steps) == 0 {
		t.Fatal("testservers: a latency schedule needs a step")
	}
	s := &ScheduledLatency{steps: steps}
	s.URL = StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(s.delay(time.Now()))
		ctx.SetBodyString("ok")
	})
	return s
}

// Begin sets the schedule's time zero, the instant the load starts at.
func (s *ScheduledLatency) Begin(at time.Time) { s.zero.Store(at.UnixNano()) }

// BeginAtFirstRequest makes the first request to arrive set time zero:
// for load that starts where the test cannot see it (a job a worker
// runs), its first request arrives within a millisecond or so of its start.
func (s *ScheduledLatency) BeginAtFirstRequest() { s.onFirst.Store(true) }

func (s *ScheduledLatency) delay(now time.Time) time.Duration {
	if s.onFirst.Load() {
		s.zero.CompareAndSwap(0, now.UnixNano())
	}
	zero := s.zero.Load()
	if zero == 0 {
		return s.steps[0].Delay
	}
	at := now.Sub(time.Unix(0, zero))
	for _, st := range s.steps {
		if at < st.For {
			return st.Delay
		}
		at -= st.For
	}
	return s.steps[len(s.steps)-1].Delay
}
