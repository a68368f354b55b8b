package loadgen

import (
	"github.com/benchq/benchq/internal/measure"
	"time"
)

// startProgress calls Plan.Progress every ProgressInterval from one
// goroutine until the run stops; the returned channel closes when it has
// returned for the last time.
func (e *engine) startProgress() <-chan struct{} {
	if e.plan.Progress == nil {
		return closedChan()
	}
	return e.everySnapshot(e.plan.ProgressInterval, func(s measure.Snapshot) bool {
		e.plan.Progress(s)
		return true
	})
}

// startWatch asks Plan.Watch every WatchInterval from one goroutine
// whether the run should end, and ends it when the answer is not empty;
// the returned channel closes when Watch has returned for the last time.
func (e *engine) startWatch() <-chan struct{} {
	if e.plan.Watch == nil {
		return closedChan()
	}
	return e.everySnapshot(e.plan.WatchInterval, func(s measure.Snapshot) bool {
		if why := e.plan.Watch(s); why != "" {
			e.stop(stopWatched, why)
			return false
		}
		return true
	})
}

// everySnapshot hands f a snapshot every d, from one goroutine, until the
// run stops or f returns false; the returned channel closes after f's last
// call.
func (e *engine) everySnapshot(d time.Duration, f func(measure.Snapshot) bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(d)
		defer tick.Stop()
		var prev measure.Snapshot
		for {
			select {
			case <-e.stopCh:
				return
			case <-tick.C:
				s := e.snapshot(prev)
				prev = s
				if !f(s) {
					return
				}
			}
		}
	}()
	return done
}

func closedChan() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// snapshot sums the workers' counters; prev gives the interval for the rate.
func (e *engine) snapshot(prev measure.Snapshot) measure.Snapshot {
	s := measure.Snapshot{Elapsed: time.Since(e.start)}
	var started, done int64
	for _, w := range e.workers {
		// non-2xx before completed, which a worker counts first: the
		// snapshot never has more non-2xx answers than completed requests.
		s.Non2xx += w.pub.non2xx.Load()
		started += w.pub.started.Load()
		done += w.pub.done.Load()
		s.Completed += w.pub.completed.Load()
		s.Failed += w.pub.failed.Load()
		s.BytesRead += w.pub.bytes.Load()
	}
	s.InFlight = max(0, started-done)
	if dt := (s.Elapsed - prev.Elapsed).Seconds(); dt > 0 {
		s.CurrentRPS = float64(s.Completed-prev.Completed) / dt
	}
	return s
}
