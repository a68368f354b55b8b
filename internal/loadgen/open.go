package loadgen

import "time"

// Open-model pacing thresholds.
const (
	// sleepFloor: a start closer than this is not worth a timer; the
	// request goes at once, a few µs early at most.
	sleepFloor = 50 * time.Microsecond
	// lateAfter: a start later than this after its intended time is late.
	lateAfter = time.Millisecond
)

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
		now := time.Now()
		if wait := intended.Sub(now); wait > sleepFloor {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-e.stopCh:
				return
			}
			now = time.Now()
		}
		if e.warming(now) {
			w.local.warmStarts++
		} else if now.Sub(intended) > lateAfter {
			w.local.late++
		}
		w.local.lastStart = now
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
