package loadgen

import "time"

// Open-model pacing thresholds.
const (
	// sleepFloor: a start closer than this is not worth a timer, whose
	// park and wake-up cost about as much; the worker spins until it is
	// due instead, so no request starts early.
	sleepFloor = 20 * time.Microsecond
	// lateAfter: a start later than this after its intended time is late.
	lateAfter = time.Millisecond
)

// waitFor waits until intended and returns the time it read then; false
// when the run stopped meanwhile. The run's nudge (pace_linux.go) wakes
// the runtime for the timer.
func (w *worker) waitFor(timer *time.Timer, intended time.Time) (time.Time, bool) {
	now := time.Now()
	wait := intended.Sub(now)
	if wait > sleepFloor {
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-w.e.stopCh:
			return now, false
		}
		now = time.Now()
	}
	for now.Before(intended) {
		now = time.Now()
	}
	return now, true
}

// offset is when start i is due after the engine's start: i/Rate at a
// fixed rate, the ramp's schedule under Plan.Stages (false: never).
func (e *engine) offset(i int64) (time.Duration, bool) {
	if e.rate != nil {
		return e.rampOffset(i)
	}
	return time.Duration(float64(i) * float64(time.Second) / e.plan.Rate), true
}

// runOpen starts request i at start + i/Rate (or its ramp's offset), taking the next index whenever
// the worker is free, so Concurrency caps the requests in flight. Latency
// runs from the intended start: a stalled server delays the starts behind it
// and their wait is counted, as wrk2 does, instead of omitted.
func (w *worker) runOpen() {
	e := w.e
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for !e.stopped() {
		i := e.issued.Add(1) - 1
		if e.plan.Requests > 0 && i >= int64(e.plan.Requests) {
			return
		}
		offset, ok := e.offset(i)
		if !ok || e.plan.Duration > 0 && offset >= e.runFor() {
			return
		}
		intended := e.start.Add(offset)
		now, ok := w.waitFor(timer, intended)
		if !ok {
			return
		}
		if e.warming(now) {
			w.local.warmStarts++
		} else if micros(now.Sub(intended)) > lateAfter.Microseconds() {
			// In whole µs, as the send lag's histogram and the timeline
			// judge a start late.
			w.local.late++
		}
		w.local.lastStart = now
		if next, ok := e.offset(i + 1); ok {
			e.nudge.at(i+1, e.start.Add(next).Sub(now))
		}
		// The workers wait between requests, so no span of theirs says how
		// many were in flight; a shared counter does, at a cost below the
		// schedule's own shared index and timer.
		if n := e.inFlight.Add(1); n > w.local.maxInFlight {
			w.local.maxInFlight = n
		}
		w.do(intended, now)
		e.inFlight.Add(-1)
	}
}
