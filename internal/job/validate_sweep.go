package job

import (
	"math"
	"strings"
)

func (v *validator) sweep(w Sweep) {
	for i, c := range w.Concurrency {
		v.concurrency(index("sweep.concurrency", i), c)
	}
	for i, n := range w.Requests {
		if n < 1 {
			v.add(index("sweep.requests", i), "%d is below 1", n)
			continue
		}
		v.stop(index("sweep.requests", i), stop{requests: n})
	}
	for i, d := range w.Duration {
		if d <= 0 {
			v.add(index("sweep.duration", i), "%v is not positive", d)
			continue
		}
		v.stop(index("sweep.duration", i), stop{duration: d})
	}
	for i, r := range w.Rate {
		v.rate(index("sweep.rate", i), r.From)
		if r.Ramp() {
			v.rate(index("sweep.rate", i), r.To)
		}
		v.rateRamp(w, index("sweep.rate", i), r)
	}
	duplicates(v, "sweep.concurrency", w.Concurrency)
	duplicates(v, "sweep.requests", w.Requests)
	duplicates(v, "sweep.duration", w.Duration)
	duplicates(v, "sweep.rate", w.Rate)
	sameStart(v, w.Rate)
	if len(w.Requests) > 0 && len(w.Duration) > 0 {
		v.add("sweep.duration", "give requests or duration, not both")
	}
	if len(w.Rate) > 0 && len(w.Requests) == 0 && len(w.Duration) == 0 {
		v.add("sweep.rate", "a rate needs requests or duration to end each run")
	}
	v.sweepRunOptions(w)
}

func (v *validator) sweepRunOptions(w Sweep) {
	switch {
	case w.Repeats < 1:
		v.add("sweep.repeats", "%d is below 1", w.Repeats)
	case w.Repeats > v.lim.MaxRuns:
		v.add("sweep.repeats", "%d is above the limit of %d runs", w.Repeats, v.lim.MaxRuns)
	}
	if w.WarmupRequests < 0 || w.WarmupRequests > v.lim.MaxRequests {
		v.add("sweep.warmup_requests", "%d is outside 0..%d", w.WarmupRequests, v.lim.MaxRequests)
	}
	if w.PauseBetweenRuns < 0 || w.PauseBetweenRuns.Std() > v.lim.MaxDuration {
		v.add("sweep.pause_between_runs", "%v is outside 0s..%v", w.PauseBetweenRuns, v.lim.MaxDuration)
	}
	if w.Settle < 0 || w.Settle.Std() > v.lim.MaxDuration {
		v.add("sweep.settle", "%v is outside 0s..%v", w.Settle, v.lim.MaxDuration)
	}
	if w.SettleBelow < 0 || w.SettleBelow > 1 || math.IsNaN(w.SettleBelow) {
		v.add("sweep.settle_below", "%v is not a share of the server's cores between 0 and 1", w.SettleBelow)
	}
	switch {
	case w.Shards < 1:
		v.add("sweep.shards", "%d is below 1", w.Shards)
	case w.Shards > MaxShards:
		v.add("sweep.shards", "%d shards are above the limit of %d worker processes", w.Shards, MaxShards)
	}
	if w.Order != OrderInterleaved && w.Order != OrderSequential {
		v.add("sweep.order", "unknown order %q: want %s or %s", w.Order, OrderInterleaved, OrderSequential)
	}
}

// cells checks what only the expanded sweep shows: values a target's own
// flags bring, ab's rule that a run has at least as many requests as
// workers, and the number of points and runs.
func (v *validator) cells(s Spec, res []resolved) {
	per := s.axesOf(res)
	n := pointCount(per)
	if n > v.lim.MaxPoints {
		v.add("sweep", "%d points (targets × concurrency × requests or duration × rate) exceed the limit of %d", n, v.lim.MaxPoints)
		return // too many to check one by one
	}
	runs := n * max(s.Sweep.Repeats, 1)
	if runs > v.lim.MaxRuns {
		v.add("sweep.repeats", "%d runs (%d points × %d repeats) exceed the limit of %d", runs, n, s.Sweep.Repeats, v.lim.MaxRuns)
	}
	for _, c := range s.expand(per) {
		v.flagValues(c)
		if c.Rate == 0 && c.Requests > 0 && c.Requests < c.Concurrency && c.Concurrency <= v.lim.MaxConcurrency {
			v.add(c.stopField, "%d requests are fewer than the concurrency %d (ab's rule: -n at least -c)", c.Requests, c.Concurrency)
		}
		v.shardable(s.Sweep.Shards, c)
	}
}

// shardable refuses a point that k shards cannot share: each shard needs
// at least one worker and one request of its own.
func (v *validator) shardable(k int, c cell) {
	if k <= 1 || k > MaxShards {
		return
	}
	if c.Concurrency < k {
		v.add("sweep.shards", "%d shards need a concurrency of at least %d per point, but %s is %d", k, k, c.concField, c.Concurrency)
	}
	if c.Requests > 0 && c.Requests < k {
		v.add("sweep.shards", "%d shards need at least %d requests per run, but %s is %d", k, k, c.stopField, c.Requests)
	}
}

// flagValues checks the values of a cell that came from a target's flags;
// the sweep's own lists were checked entry by entry already.
func (v *validator) flagValues(c cell) {
	if !isSweepField(c.concField) {
		v.concurrency(c.concField, c.Concurrency)
	}
	if !isSweepField(c.stopField) {
		if c.Requests < 0 || c.Duration < 0 || (c.Requests == 0 && c.Duration == 0) {
			v.add(c.stopField, "requests or duration is required to end each run")
		} else {
			v.stop(c.stopField, stop{requests: c.Requests, duration: c.Duration})
		}
	}
	if !isSweepField(c.rateField) && c.Rate != 0 {
		v.rate(c.rateField, c.Rate)
	}
}

// isSweepField reports whether f names a list the validator checks entry
// by entry already: the sweep's, or the stages (v.stages).
func isSweepField(f string) bool { return strings.HasPrefix(f, "sweep.") || f == "stages" }

func (v *validator) concurrency(field string, c int) {
	switch {
	case c < 1:
		v.add(field, "concurrency %d is below 1", c)
	case c > v.lim.MaxConcurrency:
		v.add(field, "concurrency %d is above the limit of %d", c, v.lim.MaxConcurrency)
	}
}

func (v *validator) stop(field string, st stop) {
	if st.requests > v.lim.MaxRequests {
		v.add(field, "%d requests are above the limit of %d", st.requests, v.lim.MaxRequests)
	}
	if st.duration.Std() > v.lim.MaxDuration {
		v.add(field, "duration %v is above the limit of %v", st.duration, v.lim.MaxDuration)
	}
}

func (v *validator) rate(field string, r float64) {
	switch {
	case math.IsNaN(r) || math.IsInf(r, 0) || r <= 0:
		v.add(field, "rate %v is not a positive number", r)
	case r > v.lim.MaxRate:
		v.add(field, "rate %v is above the limit of %v per second", r, v.lim.MaxRate)
	}
}

// duplicates refuses a value listed twice: it would make two identical
// points, which the comparison tables cannot tell apart.
func duplicates[T comparable](v *validator, field string, list []T) {
	first := make(map[T]int, len(list))
	for i, x := range list {
		if j, ok := first[x]; ok {
			v.add(index(field, i), "duplicate of %s", index(field, j))
			continue
		}
		first[x] = i
	}
}
