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

// liveIntervals is how many of the latest intervals keep a whole histogram
// for the requests still arriving; older ones are compacted to the span of
// buckets they use. A worker hands its records over in batches, so an
// interval keeps receiving for a while after it ended: a request that
// completed in it sits in a batch until the worker's next flush. A late
// record into a compacted interval rebuilds its histogram (rare, and exact).
const liveIntervals = 2

// timelineRecorder builds one shard's timeline from its records, under the
// shard's lock: per record a division, a few additions and one histogram
// record. Its intervals' Latency hold compacted histograms; the latest
// intervals' histograms are in live until they are compacted.
type timelineRecorder struct {
	tl     measure.Timeline
	live   map[int]*hdrhistogram.Histogram
	newest int
	spare  []*hdrhistogram.Histogram // reset histograms to reuse
}

func newTimelineRecorder(origin time.Time, interval time.Duration) *timelineRecorder {
	return &timelineRecorder{
		tl:   measure.Timeline{Start: origin, Interval: interval},
		live: make(map[int]*hdrhistogram.Histogram, liveIntervals+1),
	}
}

// index is the interval of an event at offset ns from the origin, growing
// the timeline (and coarsening it past the cap) as needed.
func (t *timelineRecorder) index(offset int64) int {
	offset = max(0, offset)
	i := int(offset / int64(t.tl.Interval))
	for i >= measure.MaxTimelineIntervals {
		t.compactAll()
		t.tl.Coarsen()
		t.newest /= 2
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
		countFailure(&iv.Failures, r.failedAs)
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

// histogram is interval i's live histogram, made (from its compacted
// counts, if any) when it has none; a newer interval compacts the old ones.
func (t *timelineRecorder) histogram(i int) *hdrhistogram.Histogram {
	if h, ok := t.live[i]; ok {
		return h
	}
	if i > t.newest {
		t.newest = i
		for j, h := range t.live {
			if j <= i-liveIntervals {
				t.compact(j, h)
			}
		}
	}
	var h *hdrhistogram.Histogram
	if n := len(t.spare); n > 0 {
		h, t.spare = t.spare[n-1], t.spare[:n-1]
	} else {
		h = measure.NewIntervalHistogram()
	}
	if lat := &t.tl.Intervals[i].Latency; len(lat.Counts) > 0 {
		h.Merge(lat.Histogram())
		lat.Offset, lat.Counts = 0, nil
	}
	t.live[i] = h
	return h
}

func (t *timelineRecorder) compact(i int, h *hdrhistogram.Histogram) {
	t.tl.Intervals[i].Latency.Set(h)
	h.Reset()
	t.spare = append(t.spare, h)
	delete(t.live, i)
}

func (t *timelineRecorder) compactAll() {
	for i, h := range t.live {
		t.compact(i, h)
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
	if d := e.plan.Duration; d > 0 && d < end {
		end = d
	}
	total := int64(math.Ceil(end.Seconds() * e.plan.Rate))
	if n := int64(e.plan.Requests); n > 0 && n < total {
		total = n
	}
	// Due before offset d (from the engine's start): the first ⌈d·Rate⌉.
	due := func(d time.Duration) int64 {
		return min(total, max(0, int64(math.Ceil(d.Seconds()*e.plan.Rate))))
	}
	lead := e.start.Sub(tl.Start) // the engine's start after the origin
	for i := 0; ; i++ {
		from := time.Duration(i)*tl.Interval - lead
		if due(from) >= total {
			break
		}
		if i >= len(tl.Intervals) {
			tl.Intervals = append(tl.Intervals, measure.Interval{})
		}
		tl.Intervals[i].Intended += due(from+tl.Interval) - due(from)
	}
	for len(tl.Intervals) > measure.MaxTimelineIntervals {
		tl.Coarsen()
	}
}
