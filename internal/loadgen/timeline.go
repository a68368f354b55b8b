package loadgen

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/benchq/benchq/internal/measure"
)

// What a record says happened.
const (
	recCompleted uint8 = iota // a response completed: timings, status
	recFailed                 // a request failed in class failedAs
	recBytes                  // bytes only: read by requests the run's end cut short
)

// liveIntervals is how many intervals keep a whole histogram for the
// requests still arriving (interval i in slot i mod liveIntervals); the
// others are compacted to the span of buckets they use. A worker hands its records over in batches, so an
// interval keeps receiving for a while after it ended: a request that
// completed in it sits in a batch until the worker's next flush. A late
// record into a compacted interval rebuilds its histogram (rare, and exact).
const liveIntervals = 4

// timelineRecorder builds one shard's timeline from its records, under the
// shard's lock: per record a division, a few additions and one histogram
// record. Its intervals' Latency hold compacted histograms; the latest
// intervals' histograms are in live until they are compacted.
type timelineRecorder struct {
	tl measure.Timeline
	// live[i%liveIntervals] is interval i's histogram while it is one of
	// the latest: a slot, not a map, so a record finds it with a
	// comparison.
	live [liveIntervals]liveHistogram
}

type liveHistogram struct {
	interval int // -1: the slot is free
	h        *hdrhistogram.Histogram
}

func newTimelineRecorder(origin time.Time, interval time.Duration) *timelineRecorder {
	t := &timelineRecorder{tl: measure.Timeline{Start: origin, Interval: interval}}
	for k := range t.live {
		t.live[k] = liveHistogram{interval: -1, h: measure.NewIntervalHistogram()}
	}
	return t
}

// index is the interval of an event at offset ns from the origin, growing
// the timeline (and coarsening it past the cap) as needed.
func (t *timelineRecorder) index(offset int64) int {
	offset = max(0, offset)
	i := int(offset / int64(t.tl.Interval))
	for i >= measure.MaxTimelineIntervals {
		t.compactAll()
		t.tl.Coarsen()
		i = int(offset / int64(t.tl.Interval))
	}
	if n := i + 1 - len(t.tl.Intervals); n > 0 {
		t.tl.Intervals = append(t.tl.Intervals, make([]measure.Interval, n)...)
	}
	return i
}

func (t *timelineRecorder) add(r *record) {
	i := t.index(r.at)
	iv := &t.tl.Intervals[i]
	iv.Bytes += r.bytes
	switch r.kind {
	case recCompleted:
		iv.Requests++
		ok := r.status >= 200 && r.status <= 299
		if !ok {
			iv.Non2xx++
		}
		if r.lengthFailed {
			iv.Failures.Length++
		} else if ok {
			iv.Succeeded++
		}
		iv.Latency.Count++
		iv.Latency.Max = max(iv.Latency.Max, r.total)
		_ = t.histogram(i).RecordValue(min(r.total, maxRecordable)) // in range by the clamp
	case recFailed:
		countFailure(&iv.Failures, class(r.failedAs))
	}
	if r.started >= 0 { // the open model's start
		s := &t.tl.Intervals[t.index(r.started)]
		s.Started++
		if r.lag > lateAfter.Microseconds() {
			s.Late++
		}
		s.MaxSendLag = max(s.MaxSendLag, r.lag)
	}
}

// maxRecordable is the interval histograms' highest value (an hour in µs).
var maxRecordable = measure.NewIntervalHistogram().HighestTrackableValue()

// histogram is interval i's live histogram. An interval without one takes
// its slot, compacting the older interval there, and starts from its own
// compacted counts, if any (a late record).
func (t *timelineRecorder) histogram(i int) *hdrhistogram.Histogram {
	slot := &t.live[i%liveIntervals]
	if slot.interval == i {
		return slot.h
	}
	t.compact(slot)
	slot.interval = i
	if lat := &t.tl.Intervals[i].Latency; len(lat.Counts) > 0 {
		slot.h.Merge(lat.Histogram())
		lat.Offset, lat.Counts = 0, nil
	}
	return slot.h
}

// compact moves a slot's histogram into its interval's Latency and frees
// the slot.
func (t *timelineRecorder) compact(slot *liveHistogram) {
	if slot.interval < 0 {
		return
	}
	t.tl.Intervals[slot.interval].Latency.Set(slot.h)
	slot.h.Reset()
	slot.interval = -1
}

func (t *timelineRecorder) compactAll() {
	for k := range t.live {
		t.compact(&t.live[k])
	}
}

// timeline compacts every interval and returns the shard's timeline; the
// recorder is not used after.
func (t *timelineRecorder) timeline() *measure.Timeline {
	t.compactAll()
	return &t.tl
}

// startTimeline gives each shard its timeline recorder, once the engine's
// start is known and before any worker runs.
func (e *engine) startTimeline() {
	if !e.recordTimeline {
		return
	}
	e.timelineInterval = e.plan.TimelineInterval
	if e.timelineInterval == 0 {
		e.timelineInterval = measure.DefaultTimelineInterval
	}
	e.origin = e.start
	if at := e.plan.StartAt; !at.IsZero() && !at.After(e.start) {
		e.origin = at
	}
	for _, s := range e.shards {
		s.timeline = newTimelineRecorder(e.origin, e.timelineInterval)
	}
}

// timeline merges the shards' timelines, adds the open model's intended
// starts and returns the run's, nil when the run keeps none.
func (e *engine) timeline() *measure.Timeline {
	if !e.recordTimeline {
		return nil
	}
	tl := &measure.Timeline{Start: e.origin, Interval: e.timelineInterval}
	for _, s := range e.shards {
		tl.Merge(s.timeline.timeline())
	}
	if e.open {
		e.addIntended(tl)
	}
	return tl
}

// addIntended counts the starts the schedule put in each interval, up to
// the schedule's end (Requests, Duration) or the run's stop, whichever came
// first: start i was due at i/Rate after the engine's start.
func (e *engine) addIntended(tl *measure.Timeline) {
	end := e.stoppedAt.Sub(e.start)
	if d := e.runFor(); e.plan.Duration > 0 && d < end {
		end = d
	}
	total := e.scheduleTotal(end)
	for i := 0; ; i++ {
		from := time.Duration(i) * tl.Interval
		if e.dueBefore(from, total) >= total {
			break
		}
		if i >= len(tl.Intervals) {
			tl.Intervals = append(tl.Intervals, measure.Interval{})
		}
		tl.Intervals[i].Intended += e.intendedBetween(from, from+tl.Interval, total)
	}
	for len(tl.Intervals) > measure.MaxTimelineIntervals {
		tl.Coarsen()
	}
}

// scheduleTotal is how many starts the open model's schedule has when it
// ends end after the engine's start (negative: it has no end yet), capped
// by Requests.
func (e *engine) scheduleTotal(end time.Duration) int64 {
	total := int64(math.MaxInt64)
	if end >= 0 {
		total = int64(math.Ceil(end.Seconds() * e.plan.Rate))
	}
	if n := int64(e.plan.Requests); n > 0 && n < total {
		total = n
	}
	return total
}

// dueBefore is how many of the schedule's total starts are due before
// offset d from the origin: the first ⌈(d - lead)·Rate⌉, lead being the
// engine's start after the origin.
func (e *engine) dueBefore(d time.Duration, total int64) int64 {
	d -= e.start.Sub(e.origin)
	return min(total, max(0, int64(math.Ceil(d.Seconds()*e.plan.Rate))))
}

// intendedBetween counts the starts due in [from, to), offsets from the
// origin.
func (e *engine) intendedBetween(from, to time.Duration, total int64) int64 {
	return e.dueBefore(to, total) - e.dueBefore(from, total)
}
