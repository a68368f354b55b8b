package measure

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Timeline bounds.
const (
	// DefaultTimelineInterval is a timeline's interval when the plan names none.
	DefaultTimelineInterval = time.Second
	// MinTimelineInterval is the shortest interval a plan may ask for:
	// shorter ones hold too few requests for their percentiles to mean
	// anything and cost a histogram each.
	MinTimelineInterval = 100 * time.Millisecond
	// MaxTimelineIntervals caps a timeline's length: a run that would pass
	// it has its adjacent intervals merged pairwise (the interval doubles),
	// so memory and storage stay bounded for any run length.
	MaxTimelineIntervals = 3600
)

// An interval's latency histogram: the run's range (1 µs to an hour) at one
// significant digit, 16 buckets per doubling, so a percentile is within
// 6 % (count and max are kept exactly beside it). The run's own histograms
// keep three digits; an interval's percentiles are read off a chart, and a
// full histogram per interval at two digits would not store a 10-minute
// run in 64 KiB (see EncodeTimelineWithin).
const intervalDigits = 1

// NewIntervalHistogram returns an empty histogram with the geometry of an
// interval's latency; Latency.Set takes one back.
func NewIntervalHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, intervalDigits)
}

// Timeline is what happened during a run, interval by interval: interval i
// covers [Start + i·Interval, Start + (i+1)·Interval). Start is the run's
// start, or the instant shards agreed on (Plan.StartAt), so the timelines of
// shards started together line up interval for interval and merge exactly.
// A request counts in the interval in which it completed or failed. The
// intervals' counts add up to the run's: Requests to Complete, Failures to
// Failures (and so to Failed), Non2xx to Non2xx, Bytes to
// TotalReceivedBytes, Latency.Count to Total.Count.
type Timeline struct {
	Start     time.Time
	Interval  time.Duration
	Intervals []Interval
	// LatencyLevel is how far the intervals' latency histograms were
	// coarsened to store the timeline (CoarsenLatency): 0 as recorded,
	// each level halving the buckets.
	LatencyLevel int
}

// Interval is one interval of a Timeline.
type Interval struct {
	Requests  int64    // completed responses, as Measurement.Complete
	Succeeded int64    // of those, with a 2xx status and the expected length
	Failures  Failures // by class, as Measurement.Failures
	Non2xx    int64
	Bytes     int64   // received: headers and bodies
	Latency   Latency // of the completed requests, as Measurement.Total

	// The open model only. Intended counts the starts the schedule put in
	// the interval, Started the actual starts of the requests that ended
	// before the run did (those cut by its end are not counted, as
	// elsewhere), Late those of them more than 1 ms behind their intended
	// start, MaxSendLag the largest such delay in µs: the send-time error.
	Intended   int64
	Started    int64
	Late       int64
	MaxSendLag int64

	// Concurrency is, in a closed-model concurrency ramp (Plan.Stages),
	// the most connections the ramp allowed in the interval; zero
	// otherwise. Merged as a maximum, as MaxSendLag is.
	Concurrency int64
}

// Latency is an interval's latency distribution: an HdrHistogram of
// NewIntervalHistogram's geometry, kept as the span of its counts array
// that holds any (Counts[0] is the histogram's count at index Offset), so
// an interval costs what its values spread over, not the whole range.
// Count and Max are exact; quantiles come from the histogram.
type Latency struct {
	Count  int64
	Max    int64 // µs
	Offset int
	Counts []int64
}

// Set replaces l's histogram with h's counts (h has NewIntervalHistogram's
// geometry); Count and Max are left as they are, being kept exactly by
// whoever records.
func (l *Latency) Set(h *hdrhistogram.Histogram) {
	counts := h.Export().Counts
	lo, hi := 0, len(counts)
	for lo < hi && counts[lo] == 0 {
		lo++
	}
	for hi > lo && counts[hi-1] == 0 {
		hi--
	}
	l.Offset, l.Counts = lo, append([]int64(nil), counts[lo:hi]...)
	if hi == lo {
		l.Offset, l.Counts = 0, nil
	}
}

// Histogram rebuilds the interval's histogram.
func (l *Latency) Histogram() *hdrhistogram.Histogram {
	snap := NewIntervalHistogram().Export()
	copy(snap.Counts[min(l.Offset, len(snap.Counts)):], l.Counts)
	return hdrhistogram.Import(snap)
}

// Quantiles gives, for each fraction q (0..1), the value in µs below which
// that fraction of the interval's latencies lie, within the histogram's
// 6 %, at most Max; zeros for an interval without a completed request. One
// call rebuilds the histogram once for all of them.
func (l *Latency) Quantiles(qs ...float64) []int64 {
	out := make([]int64, len(qs))
	if l.Count == 0 || len(l.Counts) == 0 {
		return out
	}
	h := l.Histogram()
	for i, q := range qs {
		out[i] = min(l.Max, h.ValueAtQuantile(max(0, min(1, q))*100))
	}
	return out
}

// Merge adds o's latencies to l exactly, bucket for bucket.
func (l *Latency) Merge(o *Latency) {
	l.Count += o.Count
	l.Max = max(l.Max, o.Max)
	if len(o.Counts) == 0 {
		return
	}
	if len(l.Counts) == 0 {
		l.Offset, l.Counts = o.Offset, append([]int64(nil), o.Counts...)
		return
	}
	lo := min(l.Offset, o.Offset)
	hi := max(l.Offset+len(l.Counts), o.Offset+len(o.Counts))
	if lo != l.Offset || hi != l.Offset+len(l.Counts) {
		grown := make([]int64, hi-lo)
		copy(grown[l.Offset-lo:], l.Counts)
		l.Offset, l.Counts = lo, grown
	}
	for i, n := range o.Counts {
		l.Counts[o.Offset-lo+i] += n
	}
}

// Merge adds o, the same interval measured in parallel or the next
// interval of a timeline being coarsened, to iv. iv's buckets are added to
// in place: merge into a zero Interval, not a copy of another, to keep that
// one as it was.
func (iv *Interval) Merge(o *Interval) {
	iv.Requests += o.Requests
	iv.Succeeded += o.Succeeded
	iv.Failures.Merge(o.Failures)
	iv.Non2xx += o.Non2xx
	iv.Bytes += o.Bytes
	iv.Latency.Merge(&o.Latency)
	iv.Intended += o.Intended
	iv.Started += o.Started
	iv.Late += o.Late
	iv.MaxSendLag = max(iv.MaxSendLag, o.MaxSendLag)
	iv.Concurrency = max(iv.Concurrency, o.Concurrency)
}

// Coarsen merges the intervals pairwise (0 and 1, 2 and 3, …): the interval
// doubles and the boundaries stay on the same grid from Start, so two
// timelines of one origin coarsened to the same interval still line up.
func (t *Timeline) Coarsen() {
	n := (len(t.Intervals) + 1) / 2
	for i := range n {
		iv := t.Intervals[2*i]
		if 2*i+1 < len(t.Intervals) {
			iv.Merge(&t.Intervals[2*i+1])
		}
		t.Intervals[i] = iv
	}
	clear(t.Intervals[n:])
	t.Intervals = t.Intervals[:n]
	t.Interval *= 2
}

// MaxLatencyLevel is the coarsest latency a timeline is stored with: 4
// buckets per doubling, a percentile within 25 %. Past it a timeline that
// does not fit is coarsened in time instead.
const MaxLatencyLevel = 2

// LatencyErrorPct is how far above the recorded latency a percentile read
// from one of t's intervals can be, in percent: an interval histogram's
// bucket is 1/16 of its doubling wide (6.25 %), twice that per latency
// level.
func (t *Timeline) LatencyErrorPct() float64 {
	return 100 * float64(int(1)<<t.LatencyLevel) / 16
}

// CoarsenLatency halves the resolution of every interval's latency
// histogram: each aligned pair of buckets (of the level before) becomes
// one, counted in the higher of its buckets, so a percentile read from it
// is the pair's upper bound, never below the truth. HdrHistogram's
// doublings hold 16 buckets each (the first 32), so an aligned group never
// straddles two; two timelines coarsened to the same level still merge
// bucket for bucket, exactly.
func (t *Timeline) CoarsenLatency() {
	t.LatencyLevel++
	for i := range t.Intervals {
		t.Intervals[i].Latency.coarsen(t.LatencyLevel)
	}
}

// coarsen moves every bucket's count into the last bucket of its aligned
// group of 1<<level, the span shrinking or growing to the groups used.
func (l *Latency) coarsen(level int) {
	if len(l.Counts) == 0 {
		return
	}
	g := 1 << level
	lo := l.Offset / g * g
	hi := (l.Offset + len(l.Counts) + g - 1) / g * g
	out := make([]int64, hi-lo)
	for i, n := range l.Counts {
		idx := l.Offset + i
		out[(idx/g*g+g-1)-lo] += n
	}
	l.Offset, l.Counts = lo+g-1, out[g-1:]
	// Only every g-th bucket holds a count now; trim the empty tail.
	end := len(l.Counts)
	for end > 0 && l.Counts[end-1] == 0 {
		end--
	}
	l.Counts = l.Counts[:end]
}

// Merge adds o, measured in parallel from the same origin (shards started at
// the agreed instant), to t interval by interval; the finer of the two is
// coarsened to the other's interval, and to its latency level, first. Start is the earlier of the two:
// shards' origins are the one agreed instant read on their own clocks.
func (t *Timeline) Merge(o *Timeline) {
	if o == nil || o.Interval <= 0 {
		return
	}
	if t.Interval <= 0 {
		*t = *o.Clone()
		return
	}
	for t.Interval < o.Interval {
		t.Coarsen()
	}
	for t.LatencyLevel < o.LatencyLevel {
		t.CoarsenLatency()
	}
	if o.Interval < t.Interval || o.LatencyLevel < t.LatencyLevel {
		o = o.Clone()
		for o.Interval < t.Interval {
			o.Coarsen()
		}
		for o.LatencyLevel < t.LatencyLevel {
			o.CoarsenLatency()
		}
	}
	if o.Start.Before(t.Start) || t.Start.IsZero() {
		t.Start = o.Start
	}
	for len(t.Intervals) < len(o.Intervals) {
		t.Intervals = append(t.Intervals, Interval{})
	}
	for i := range o.Intervals {
		t.Intervals[i].Merge(&o.Intervals[i])
	}
	for len(t.Intervals) > MaxTimelineIntervals {
		t.Coarsen()
	}
}

// Clone returns a deep copy of t.
func (t *Timeline) Clone() *Timeline {
	c := &Timeline{Start: t.Start, Interval: t.Interval, Intervals: make([]Interval, len(t.Intervals)), LatencyLevel: t.LatencyLevel}
	for i, iv := range t.Intervals {
		iv.Latency.Counts = append([]int64(nil), iv.Latency.Counts...)
		c.Intervals[i] = iv
	}
	return c
}

// Sum adds up every interval: what a test compares with the run's totals.
func (t *Timeline) Sum() Interval {
	var s Interval
	for i := range t.Intervals {
		s.Merge(&t.Intervals[i])
	}
	return s
}
