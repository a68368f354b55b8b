package worker

import (
	"math"
	"sync"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
)

// How often a run's intervals reach the job's stream. A run with 250 ms
// intervals closes four a second; they are coalesced into one run.intervals
// event at most every intervalEventsEvery, and past a run's first minute
// or so the gap grows with the run (at least a 1/intervalEventsPerSpan of
// its time so far), so a run of T ≥ 50 s sends about 50·(1 + ln(T/50))
// events: 50 in its first 50 s, 165 in an hour. maxIntervalEvents caps a
// run's events whatever its length; past it the intervals wait for the
// run's end, which sends the rest in one last event. The progress events
// run at 4 a second, so interval events take at most a fifth of the
// job's capped stream, and job.finished, appended last, is never trimmed.
const (
	intervalEventsEvery   = time.Second
	intervalEventsPerSpan = 50
	maxIntervalEvents     = 400
	// maxEventIntervals bounds one event's intervals (about 250 bytes
	// each), well under the 1 MiB line a client reads; a run's end sends
	// what is left in as many events as it takes.
	maxEventIntervals = 1000
)

// runIntervals is the data of a run.intervals event: intervals of the
// current run's timeline, as they closed since the previous event. A
// sharded run shows the intervals its shard 0 measured, on this worker:
// the shards' merge exists only once every shard stored its measurement.
type runIntervals struct {
	job.RunKey
	Target      string                   `json:"target"`
	Concurrency int                      `json:"concurrency"`
	Shard       *shardOf                 `json:"shard,omitempty"`
	Intervals   []abreport.TimelinePoint `json:"intervals"`
}

// shardOf says which shard's intervals a run.intervals event holds.
type shardOf struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// intervalFeed collects the engine's closed intervals (Plan.OnInterval)
// and decides when they go to the stream; progressWriter writes them.
type intervalFeed struct {
	mu      sync.Mutex
	pending runIntervals // Intervals nil: nothing to send
	open    bool         // the run is in the open model
	began   time.Time    // the run's start
	last    time.Time    // the run's last event
	sent    int          // the run's events
	ended   bool         // the run ended: what is pending goes at once
	// draining says the last event took only part of what was due: the
	// rest follows without waiting for the gap.
	draining bool
}

// begin starts feeding a new run's intervals and returns the engine's
// callback for them; what is still pending of the previous run is dropped
// (its end sent it already). shards > 1 names the shard measured here.
func (f *intervalFeed) begin(k job.RunKey, p job.Point, plan measure.Plan, shards int) func(measure.ClosedInterval) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = runIntervals{RunKey: k, Target: p.Target, Concurrency: p.Concurrency}
	if shards > 1 {
		f.pending.Shard = &shardOf{Index: 0, Count: shards}
	}
	f.open, f.began, f.last, f.sent, f.ended, f.draining = plan.Rate > 0, time.Now(), time.Time{}, 0, false, false
	return f.add
}

// add is Plan.OnInterval: it only queues the interval, as a TimelinePoint.
func (f *intervalFeed) add(c measure.ClosedInterval) {
	pt := abreport.Timeline(&measure.Timeline{Interval: c.Length, Intervals: []measure.Interval{c.Interval}}, f.isOpen())[0]
	pt.TS = math.Round(c.Offset().Seconds()*1000) / 1000
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending.Intervals = append(f.pending.Intervals, pt)
}

func (f *intervalFeed) isOpen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

// end marks the run ended: its last intervals go with the next take.
func (f *intervalFeed) end() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ended = true
}

// take returns the intervals to send now, if any: when the run ended, or
// when the gap since the run's previous event passed and the run has not
// used its events up.
func (f *intervalFeed) take(now time.Time) (runIntervals, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending.Intervals) == 0 {
		return runIntervals{}, false
	}
	gap := max(intervalEventsEvery, now.Sub(f.began)/intervalEventsPerSpan)
	if !f.ended && (f.sent >= maxIntervalEvents || (!f.draining && now.Sub(f.last) < gap)) {
		return runIntervals{}, false
	}
	out := f.pending
	n := min(len(out.Intervals), maxEventIntervals)
	out.Intervals = out.Intervals[:n:n]
	f.pending.Intervals = append([]abreport.TimelinePoint(nil), f.pending.Intervals[n:]...)
	f.draining = len(f.pending.Intervals) > 0
	if !f.draining {
		f.pending.Intervals = nil
	}
	f.last = now
	f.sent++
	return out, true
}
