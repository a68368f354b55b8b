package job

import (
	"math"
	"time"
)

// Assumptions of Estimate. It must err long: the queue turns it into the
// task's timeout, and a timeout that fires before the sweep ends makes
// asynq retry the job forever, while one that is too long only delays the
// recovery of a hung worker.
const (
	// estimatePerWorkerRate is the request rate assumed per concurrent
	// worker (a 20 ms round trip), and estimateMaxRate the most assumed for
	// a whole run, however high its concurrency.
	estimatePerWorkerRate = 50.0
	estimateMaxRate       = 1000.0
	// estimateRunOverhead covers opening connections, storing the result
	// and the progress writes of each run.
	estimateRunOverhead = time.Second
)

// Estimate is an upper-bound guess of the wall time of the whole sweep:
// every run and its warm-ups (spec.warmup, sweep.warmup_requests), the pauses between runs and a fixed overhead
// per run. A run with a duration counts that duration plus one request
// timeout (the last responses); one with a rate counts requests/rate plus a
// timeout; one with only a request count assumes 50 requests/s per
// concurrent worker, at most 1000 requests/s, plus a timeout. It grows with
// every run, request, duration and pause added. A search adds, per
// target, the most its probes can take (Search.estimate).
func (s Spec) Estimate() time.Duration { return s.expansion().Estimate() }

func (c cell) runEstimate() time.Duration {
	var run time.Duration
	switch {
	case c.Rate > 0 && c.Requests > 0:
		run = seconds(float64(c.Requests) / c.Rate)
		if c.Duration > 0 {
			run = min(run, c.Duration.Std())
		}
	case c.Duration > 0:
		run = c.Duration.Std()
		if c.Requests > 0 {
			run = min(run, closedEstimate(c.Requests, c.Concurrency))
		}
	default:
		run = closedEstimate(c.Requests, c.Concurrency)
	}
	return addSat(run, c.timeout)
}

// closedEstimate is the time n requests take at the assumed rate for
// concurrency workers.
func closedEstimate(n, concurrency int) time.Duration {
	rate := min(estimatePerWorkerRate*float64(max(concurrency, 1)), estimateMaxRate)
	return seconds(float64(n) / rate)
}

func seconds(s float64) time.Duration {
	if s >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}

// addSat and mulSat saturate instead of overflowing: a spec Validate would
// refuse must still not produce a negative estimate.
func addSat(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func mulSat(d time.Duration, n int) time.Duration {
	if n > 0 && d > math.MaxInt64/time.Duration(n) {
		return math.MaxInt64
	}
	return d * time.Duration(n)
}

// RunEstimate is Estimate's upper bound for one run of p, its warm-up
// included: what a sharded run's coordinator waits for its shards at most
// once they started. A point that is not the spec's gets the default
// timeout's worth.
func (s Spec) RunEstimate(p Point) time.Duration { return s.expansion().RunEstimate(p) }

// Estimate is Spec.Estimate.
func (pl *Planner) Estimate() time.Duration {
	d := pl.spec
	repeats := max(d.Sweep.Repeats, 1)
	warmup := max(d.Sweep.WarmupRequests, 0)
	var total time.Duration
	for _, c := range pl.cells {
		run := c.runEstimate() + estimateRunOverhead + max(d.Warmup.Std(), 0)
		if c.TargetIndex >= 0 && c.TargetIndex < len(d.Targets) && d.Targets[c.TargetIndex].Monitor != nil {
			run += max(d.Sweep.Settle.Std(), 0) // at most, waiting for a quiet server
		}
		if warmup > 0 {
			run += closedEstimate(warmup, c.Concurrency)
		}
		total = addSat(total, mulSat(run, repeats))
	}
	if runs := len(pl.cells) * repeats; runs > 1 && d.Sweep.PauseBetweenRuns > 0 {
		total = addSat(total, mulSat(d.Sweep.PauseBetweenRuns.Std(), runs-1))
	}
	if d.Search != nil {
		timeout := d.Request.Timeout.Std()
		for _, t := range d.Targets {
			if t.Request != nil {
				timeout = max(timeout, t.Request.Timeout.Std())
			}
		}
		total = addSat(total, mulSat(d.Search.estimate(d.Warmup.Std(), max(timeout, DefaultTimeout)), len(d.Targets)))
	}
	return total
}

// RunEstimate is Spec.RunEstimate.
func (pl *Planner) RunEstimate(p Point) time.Duration {
	if p.Index < 0 || p.Index >= len(pl.cells) {
		return DefaultTimeout + estimateRunOverhead
	}
	c := pl.cells[p.Index]
	run := c.runEstimate() + estimateRunOverhead + max(pl.spec.Warmup.Std(), 0)
	if w := max(pl.spec.Sweep.WarmupRequests, 0); w > 0 {
		run = addSat(run, closedEstimate(w, c.Concurrency))
	}
	return run
}
