package loadgen

import (
	"math"
	"sort"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// profile is a ramp's value over the run, piecewise linear between knots
// (times in seconds from the engine's start, ascending; two knots at one
// time are a jump). Past the last knot it holds the last value.
type profile struct {
	at, v []float64
	// cum[k] is the integral of the value from 0 to at[k]: for a rate,
	// the starts due by then.
	cum []float64
}

// newProfile builds the profile that starts at start and follows stages,
// reading each stage's rate or concurrency.
func newProfile(start float64, stages []measure.Stage, rate bool) *profile {
	p := &profile{at: []float64{0}, v: []float64{start}, cum: []float64{0}}
	var t float64
	for _, s := range stages {
		v := float64(s.Concurrency)
		if rate {
			v = s.Rate
		}
		d := s.Duration.Seconds()
		k := len(p.at) - 1
		t += d
		p.at = append(p.at, t)
		p.v = append(p.v, v)
		p.cum = append(p.cum, p.cum[k]+d*(p.v[k]+v)/2)
	}
	return p
}

// value is the profile at t seconds.
func (p *profile) value(t float64) float64 {
	k := p.segment(t)
	if k+1 >= len(p.at) {
		return p.v[len(p.v)-1]
	}
	span := p.at[k+1] - p.at[k]
	if span <= 0 {
		return p.v[k+1]
	}
	return p.v[k] + (p.v[k+1]-p.v[k])*(t-p.at[k])/span
}

// segment is the index of the last knot at or before t (0 for t < 0).
func (p *profile) segment(t float64) int {
	return max(0, sort.SearchFloat64s(p.at, math.Nextafter(t, math.Inf(1)))-1)
}

// due is the integral of the rate from 0 to t: how many starts the
// schedule has put before t, as a real number.
func (p *profile) due(t float64) float64 {
	if t <= 0 {
		return 0
	}
	k := p.segment(t)
	tau := t - p.at[k]
	if k+1 >= len(p.at) {
		return p.cum[k] + tau*p.v[k]
	}
	r := p.value(t)
	return p.cum[k] + tau*(p.v[k]+r)/2
}

// offset is when start n (from 0) is due, in seconds: the first t at
// which due(t) passes n, from the quadratic of the segment in which it
// does; ok is false when the schedule never does (the rate falls to zero
// and stays there). Start 0 is at 0 unless the rate starts at zero.
func (p *profile) offset(n float64) (t float64, ok bool) {
	k := sort.Search(len(p.cum), func(i int) bool { return p.cum[i] > n }) - 1
	m := n - p.cum[k]
	if k == len(p.at)-1 {
		last := p.v[k]
		if last <= 0 {
			return 0, false
		}
		return p.at[k] + m/last, true
	}
	// cum[k] ≤ n < cum[k+1]: the segment has an area, so a span.
	span := p.at[k+1] - p.at[k]
	r0 := p.v[k]
	a := (p.v[k+1] - r0) / (2 * span) // due(at[k]+τ) = cum[k] + r0·τ + a·τ²
	den := r0 + math.Sqrt(max(0, r0*r0+4*a*m))
	if den <= 0 {
		return p.at[k], true
	}
	// 2m / (r0 + √(r0²+4am)) is the quadratic's root without the
	// cancellation of (−r0 + √…)/2a, and it holds for a = 0 too.
	return p.at[k] + min(span, 2*m/den), true
}

// rampOffset is when open-model start i is due after the engine's start,
// false when the ramp's schedule never reaches it.
func (e *engine) rampOffset(i int64) (time.Duration, bool) {
	t, ok := e.rate.offset(float64(i))
	if !ok || t*float64(time.Second) >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(t * float64(time.Second)), true
}

// active is the span, from the earliest at or after from (seconds), in
// which a concurrency ramp keeps worker k running: while its value is at
// least k+1. ok is false when it never again is.
func (p *profile) active(k int, from float64) (start, end float64, ok bool) {
	level := float64(k + 1)
	start, ok = p.cross(from, func(v float64) bool { return v >= level }, level)
	if !ok {
		return 0, 0, false
	}
	end, ok = p.cross(start, func(v float64) bool { return v < level }, level)
	if !ok {
		end = math.Inf(1)
	}
	return start, end, true
}

// cross is the first time at or after from at which in(value) holds,
// level being the value in's test turns on.
func (p *profile) cross(from float64, in func(float64) bool, level float64) (float64, bool) {
	if in(p.value(from)) {
		return from, true
	}
	for k := p.segment(from); k+1 < len(p.at); k++ {
		v0, v1 := p.v[k], p.v[k+1]
		if !in(v1) {
			continue
		}
		t0, span := p.at[k], p.at[k+1]-p.at[k]
		t := p.at[k+1]
		if span > 0 && v1 != v0 {
			t = t0 + span*(level-v0)/(v1-v0)
			// The crossing as computed may fall a rounding short of it.
			for !in(p.value(t)) && t < p.at[k+1] {
				t = math.Nextafter(t, math.Inf(1))
			}
		}
		return max(t, from), true
	}
	return 0, false
}

// seconds converts an offset in seconds from the engine's start to a time.
func (e *engine) at(s float64) time.Time {
	if s >= float64(math.MaxInt64)/float64(time.Second) {
		return e.start.Add(time.Duration(math.MaxInt64))
	}
	return e.start.Add(time.Duration(s * float64(time.Second)))
}

// runRamp is the closed model under a concurrency ramp: worker k runs
// requests back to back while the ramp's concurrency is at least k+1.
// When it falls below, the worker finishes the request in flight, closes
// its connection and waits until the ramp needs it again or the run ends.
func (w *worker) runRamp() {
	e := w.e
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for !e.stopped() {
		from, until, ok := e.conc.active(w.index, time.Since(e.start).Seconds())
		if !ok {
			return
		}
		if wait := time.Until(e.at(from)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-e.stopCh:
				return
			}
		}
		end := e.at(until)
		var next time.Time
		for time.Now().Before(end) && e.take() {
			start := next
			if start.IsZero() {
				start = time.Now()
			}
			next = w.do(start, start)
		}
		w.closeConn()
	}
}

// addConcurrency gives each interval of a concurrency ramp the most
// connections the ramp allowed in it, up to the run's stop.
func (e *engine) addConcurrency(tl *measure.Timeline) {
	end := e.stoppedAt.Sub(e.start)
	lead := e.start.Sub(tl.Start)
	for i := 0; time.Duration(i)*tl.Interval-lead < end; i++ {
		from := time.Duration(i) * tl.Interval
		if i >= len(tl.Intervals) {
			tl.Intervals = append(tl.Intervals, measure.Interval{})
		}
		c := e.concurrencyBetween(from, from+tl.Interval, end)
		tl.Intervals[i].Concurrency = max(tl.Intervals[i].Concurrency, c)
	}
	for len(tl.Intervals) > measure.MaxTimelineIntervals {
		tl.Coarsen()
	}
}

// concurrencyBetween is the most connections the ramp allowed in [from,
// to), offsets from the origin, before end (an offset from the engine's
// start): the ramp's highest value there, rounded down as the workers
// follow it.
func (e *engine) concurrencyBetween(from, to, end time.Duration) int64 {
	lead := e.start.Sub(e.origin)
	a, b := (from - lead).Seconds(), (min(to-lead, end)).Seconds()
	if b <= a {
		return 0
	}
	peak := max(e.conc.value(max(a, 0)), e.conc.value(math.Nextafter(b, math.Inf(-1))))
	for k, t := range e.conc.at {
		if t > a && t < b {
			peak = max(peak, e.conc.v[k])
		}
	}
	return int64(math.Floor(peak))
}

// requestedRate is the open model's rate asked for: Rate, or a ramp's
// mean over the time it ran.
func (e *engine) requestedRate() float64 {
	if e.rate == nil {
		return e.plan.Rate
	}
	end := e.stoppedAt.Sub(e.start)
	if d := e.runFor(); e.plan.Duration > 0 && d < end {
		end = d
	}
	if end <= 0 {
		return e.rate.v[0]
	}
	return e.rate.due(end.Seconds()) / end.Seconds()
}

// startGap is the interval between starts at t: 1/Rate, or the ramp's
// at t (zero where the ramp's rate is zero).
func (e *engine) startGap(t time.Time) float64 {
	r := e.plan.Rate
	if e.rate != nil {
		r = e.rate.value(t.Sub(e.start).Seconds())
	}
	if r <= 0 {
		return 0
	}
	return 1 / r
}

// rampPeak is the most connections a concurrency ramp ran at once before
// the run stopped: its highest value by then, rounded down as the
// workers follow it.
func (e *engine) rampPeak() int64 {
	end := e.stoppedAt.Sub(e.start).Seconds()
	peak := e.conc.value(end)
	for k, t := range e.conc.at {
		if t <= end {
			peak = max(peak, e.conc.v[k])
		}
	}
	return int64(math.Floor(peak))
}
