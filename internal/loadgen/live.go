package loadgen

import (
	"math"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// Closing intervals while the run goes (Plan.OnInterval).
const (
	// livePoll is how often the engine looks for intervals to close.
	livePoll = 100 * time.Millisecond
	// settleDelay is how long after its end an interval stays open even
	// when no worker holds a record of it: a worker that has read its
	// clock for a completion has not yet put the record in its batch, and
	// its batch's pending mark says nothing of it until it does.
	settleDelay = 250 * time.Millisecond
)

// liveTimeline hands out the intervals of a run's timeline as they close.
// Only its goroutine uses it while the run goes, then the run's own once
// that has ended.
type liveTimeline struct {
	e *engine
	// until is the offset from the origin up to which intervals have been
	// handed out.
	until time.Duration
}

// startLive calls Plan.OnInterval with each interval that closes while the
// run goes, from one goroutine, until the run stops; the returned value
// hands out the rest once the run's timeline is final.
func (e *engine) startLive() (*liveTimeline, <-chan struct{}) {
	done := make(chan struct{})
	if e.plan.OnInterval == nil || !e.recordTimeline {
		close(done)
		return nil, done
	}
	l := &liveTimeline{e: e}
	go func() {
		defer close(done)
		tick := time.NewTicker(livePoll)
		defer tick.Stop()
		for {
			select {
			case <-e.stopCh:
				return
			case <-tick.C:
				l.closeSettled(time.Now())
			}
		}
	}()
	return l, done
}

// closeSettled hands out every interval that ended settleDelay before now
// and of which no worker still holds a record.
func (l *liveTimeline) closeSettled(now time.Time) {
	e := l.e
	mark := int64(now.Sub(e.origin) - settleDelay)
	for _, w := range e.workers {
		mark = min(mark, w.pending.Load())
	}
	if mark == math.MaxInt64 || mark <= 0 {
		return
	}
	closed := time.Duration(mark)
	length := e.timelineInterval
	for _, s := range e.shards {
		s.mu.Lock()
		length = max(length, s.timeline.tl.Interval)
		s.mu.Unlock()
	}
	// Past the cap the shards coarsen: the live intervals go on on the
	// coarser grid from its first interval not yet handed out in part.
	k := int((l.until + length - 1) / length)
	for ; time.Duration(k+1)*length <= closed; k++ {
		from, to := time.Duration(k)*length, time.Duration(k+1)*length
		var iv measure.Interval
		for _, s := range e.shards {
			s.mu.Lock()
			s.timeline.span(from, to, &iv)
			s.mu.Unlock()
		}
		if e.open {
			// Before the stop the schedule's end is the plan's.
			end := time.Duration(-1)
			if e.plan.Duration > 0 {
				end = e.plan.Duration
			}
			iv.Intended = e.intendedBetween(from, to, e.scheduleTotal(end))
		}
		e.plan.OnInterval(measure.ClosedInterval{Start: e.origin, Length: length, Index: k, Interval: iv})
		l.until = to
	}
}

// closeRest hands out the final timeline's intervals not handed out yet.
func (l *liveTimeline) closeRest(tl *measure.Timeline) {
	if l == nil || tl == nil {
		return
	}
	k := int((l.until + tl.Interval - 1) / tl.Interval)
	for ; k < len(tl.Intervals); k++ {
		l.e.plan.OnInterval(measure.ClosedInterval{Start: tl.Start, Length: tl.Interval, Index: k, Interval: tl.Intervals[k]})
	}
	l.until = time.Duration(len(tl.Intervals)) * tl.Interval
}

// span merges the recorder's intervals within [from, to) into iv, the
// latest ones' from their live histograms; from and to lie on its grid.
// Called under the shard's lock; the recorder is not changed.
func (t *timelineRecorder) span(from, to time.Duration, iv *measure.Interval) {
	lo, hi := int(from/t.tl.Interval), min(int(to/t.tl.Interval), len(t.tl.Intervals))
	for i := lo; i < hi; i++ {
		one := t.tl.Intervals[i]
		if slot := &t.live[i%liveIntervals]; slot.interval == i {
			one.Latency.Set(slot.h) // a copy: the slot stays live
		}
		iv.Merge(&one)
	}
}
