package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// checkTimelineSums: the intervals add up to the run's counts exactly.
func checkTimelineSums(t *testing.T, name string, m *measure.Measurement) {
	t.Helper()
	if m.Timeline == nil {
		t.Fatalf("%s: no timeline", name)
	}
	s := m.Timeline.Sum()
	if s.Requests != m.Complete || s.Failures != m.Failures || s.Failures.Total() != m.Failed ||
		s.Non2xx != m.Non2xx || s.Bytes != m.TotalReceivedBytes || s.Latency.Count != m.Total.Count || s.Latency.Max != m.Total.Max {
		t.Errorf("%s: intervals sum to %d requests, failures %+v, %d non-2xx, %d bytes, %d latencies (max %d µs); run has %d, %+v (%d failed), %d, %d, %d (max %d µs)",
			name, s.Requests, s.Failures, s.Non2xx, s.Bytes, s.Latency.Count, s.Latency.Max,
			m.Complete, m.Failures, m.Failed, m.Non2xx, m.TotalReceivedBytes, m.Total.Count, m.Total.Max)
	}
}

// TestTimelineShowsLatencySteps runs three shards at one agreed instant
// against a target answering in 1 ms for 2 s, 20 ms for 2 s, then 1 ms
// again. Each shard's timeline and their merge (through the stored
// encoding, as the service merges shards) show the slow step in intervals
// 2 and 3 (±1 at the edges), every interval of the merge is the sum of the
// shards' intervals, and every sum equals its run's totals.
func TestTimelineShowsLatencySteps(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6 s run")
	}
	srv := testservers.StartSlowStretch(t)
	start := time.Now().Add(300 * time.Millisecond)
	srv.Begin(start)
	const shards = 3
	ms := make([]*measure.Measurement, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for i := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms[i], errs[i] = Run(context.Background(), measure.Plan{
				URLs: []string{srv.URL + "/"}, Concurrency: 2, KeepAlive: true,
				Duration: 6 * time.Second, StartAt: start,
			})
		}()
	}
	wg.Wait()
	var merged measure.Measurement
	for i, m := range ms {
		if errs[i] != nil {
			t.Fatalf("shard %d: %v", i, errs[i])
		}
		checkTimelineSums(t, "shard", m)
		checkSteps(t, "shard", m.Timeline)
		enc, err := measure.EncodeMeasurement(m)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := measure.DecodeMeasurement(enc)
		if err != nil {
			t.Fatal(err)
		}
		merged.Merge(dec)
	}
	checkTimelineSums(t, "merge", &merged)
	checkSteps(t, "merge", merged.Timeline)
	if !merged.Timeline.Start.Equal(start) {
		t.Errorf("merged timeline starts at %v, want the agreed %v", merged.Timeline.Start, start)
	}
	for i, iv := range merged.Timeline.Intervals {
		var want measure.Interval
		for _, m := range ms {
			if i < len(m.Timeline.Intervals) {
				want.Merge(&m.Timeline.Intervals[i])
			}
		}
		if iv.Requests != want.Requests || iv.Succeeded != want.Succeeded || iv.Failures != want.Failures ||
			iv.Bytes != want.Bytes || iv.Latency.Count != want.Latency.Count || iv.Latency.Max != want.Latency.Max ||
			iv.Latency.Quantiles(0.5, 0.99)[1] != want.Latency.Quantiles(0.5, 0.99)[1] {
			t.Errorf("merged interval %d = %+v; the shards' sum is %+v", i, iv, want)
		}
	}
}

// checkSteps: intervals 0 and 5 answer in about 1 ms and interval 3 in
// about 20 ms; the slow step covers two intervals, give or take one at its
// edges.
func checkSteps(t *testing.T, name string, tl *measure.Timeline) {
	t.Helper()
	if tl.Interval != time.Second || len(tl.Intervals) < 6 {
		t.Fatalf("%s: timeline of %d intervals of %v; want 6 of 1s", name, len(tl.Intervals), tl.Interval)
	}
	slow := 0
	for i, iv := range tl.Intervals[:6] {
		p50 := time.Duration(iv.Latency.Quantiles(0.5)[0]) * time.Microsecond
		t.Logf("%s: interval %d: %d requests, p50 %v", name, i, iv.Requests, p50)
		isSlow := p50 >= 15*time.Millisecond
		if isSlow {
			slow++
		}
		if iv.Requests == 0 || (i == 0 || i == 5) && isSlow || i == 3 && !isSlow {
			t.Errorf("%s: interval %d: %d requests, p50 %v", name, i, iv.Requests, p50)
		}
	}
	if slow < 1 || slow > 3 {
		t.Errorf("%s: %d slow intervals, want 2 ± 1", name, slow)
	}
}

// TestTimelineRecorderBounded: a run longer than the cap has its intervals
// merged pairwise, every count kept; records arriving late, after newer
// intervals took the live histograms, still count where they belong.
func TestTimelineRecorderBounded(t *testing.T) {
	origin := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := newTimelineRecorder(origin, 100*time.Millisecond)
	const n = 5000 // intervals of 100 ms: past the cap of 3600 once
	var want measure.Interval
	for i := range n {
		at := int64(i)*int64(100*time.Millisecond) + int64(time.Millisecond)
		r := record{kind: recCompleted, at: at, total: int64(100 + i%50), status: 200, bytes: 10, started: -1}
		rec.add(&r)
		want.Requests++
		want.Bytes += 10
		if i%7 == 0 { // a late one, three intervals back
			late := record{kind: recCompleted, at: max(0, at-int64(300*time.Millisecond)), total: 5000, status: 503, bytes: 1, started: -1}
			rec.add(&late)
			want.Requests++
			want.Non2xx++
			want.Bytes++
		}
		if i%11 == 0 {
			f := record{kind: recFailed, failedAs: uint8(classTimeout), at: at, started: -1}
			rec.add(&f)
			want.Failures.Timeout++
		}
	}
	tl := rec.timeline()
	if tl.Interval != 200*time.Millisecond || len(tl.Intervals) != n/2 {
		t.Fatalf("timeline: %d intervals of %v; want %d of 200ms", len(tl.Intervals), tl.Interval, n/2)
	}
	got := tl.Sum()
	if got.Requests != want.Requests || got.Non2xx != want.Non2xx || got.Bytes != want.Bytes || got.Failures != want.Failures ||
		got.Latency.Count != want.Requests || got.Latency.Max != 5000 || got.Succeeded != want.Requests-want.Non2xx {
		t.Errorf("sum = %+v; want %d requests, %d non-2xx, %d bytes, %+v", got, want.Requests, want.Non2xx, want.Bytes, want.Failures)
	}
	var buckets int64
	for _, iv := range tl.Intervals {
		var sum int64
		for _, c := range iv.Latency.Counts {
			sum += c
		}
		if sum != iv.Latency.Count {
			t.Fatalf("an interval's buckets hold %d values, its count says %d", sum, iv.Latency.Count)
		}
		buckets += sum
	}
	if buckets != want.Requests {
		t.Errorf("buckets hold %d values, want %d", buckets, want.Requests)
	}
}

// TestTimelineOpenModel: in the open model each interval holds the starts
// the schedule intended in it and the actual starts of the requests that
// ended; every interval's intended rate is the plan's.
func TestTimelineOpenModel(t *testing.T) {
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	m, err := Run(context.Background(), measure.Plan{
		URLs: []string{url + "/"}, Concurrency: 4, KeepAlive: true,
		Rate: 200, Duration: 2 * time.Second, TimelineInterval: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	checkTimelineSums(t, "open", m)
	tl := m.Timeline
	if len(tl.Intervals) < 4 {
		t.Fatalf("%d intervals, want 4 of 500ms", len(tl.Intervals))
	}
	var started int64
	for i, iv := range tl.Intervals {
		started += iv.Started
		if i < 4 && iv.Intended != 100 {
			t.Errorf("interval %d: %d intended starts, want 100 (200/s over 500ms)", i, iv.Intended)
		}
		if i >= 4 && iv.Intended != 0 {
			t.Errorf("interval %d, past the duration: %d intended starts", i, iv.Intended)
		}
		t.Logf("interval %d: intended %d, started %d, late %d, max lag %d µs, completed %d", i, iv.Intended, iv.Started, iv.Late, iv.MaxSendLag, iv.Requests)
	}
	if s := tl.Sum(); started != m.Complete+m.Failed || s.Late > m.Open.LateStarts {
		t.Errorf("intervals: %d started, %d late; the run completed %d, failed %d, %d late starts", started, s.Late, m.Complete, m.Failed, m.Open.LateStarts)
	}
}

// TestWarmupExcludesItsRequestsFromTheResult runs 2 s of warm-up and 2 s
// measured against a target that answers in 20 ms for its first 1.5 s and
// in 1 ms after: the result's latency holds only fast requests, its clock
// only the window, while the timeline keeps the slow start, and the
// timeline's counts are the result's plus the warm-up intervals'.
func TestWarmupExcludesItsRequestsFromTheResult(t *testing.T) {
	if testing.Short() {
		t.Skip("a 4 s run")
	}
	srv := testservers.StartScheduledLatency(t,
		testservers.LatencyStep{For: 1500 * time.Millisecond, Delay: 20 * time.Millisecond},
		testservers.LatencyStep{For: time.Hour, Delay: time.Millisecond})
	const interval = 500 * time.Millisecond
	srv.Begin(time.Now())
	m, err := Run(context.Background(), measure.Plan{
		URLs: []string{srv.URL + "/"}, Concurrency: 2, KeepAlive: true,
		Duration: 2 * time.Second, Warmup: 2 * time.Second, TimelineInterval: interval,
	})
	if err != nil {
		t.Fatal(err)
	}
	tl := m.Timeline
	if m.Warmup != 2*time.Second || !m.Started.Equal(tl.Start.Add(2*time.Second)) {
		t.Fatalf("Warmup %v, Started %v after the timeline's start, want 2s and 2s", m.Warmup, m.Started.Sub(tl.Start))
	}
	if m.Elapsed < 1900*time.Millisecond || m.Elapsed > 2500*time.Millisecond {
		t.Errorf("Elapsed = %v, want the 2 s window", m.Elapsed)
	}
	warmIntervals := int(m.Warmup / interval)
	var warm measure.Interval
	for i := range warmIntervals {
		warm.Merge(&tl.Intervals[i])
	}
	if p50 := tl.Intervals[0].Latency.Quantiles(0.5)[0]; p50 < 15000 {
		t.Errorf("the timeline's first interval has p50 %d µs, want the slow start (20 ms)", p50)
	}
	// The warm-up's slow requests (20 ms) must not be the result's: a few
	// fast ones may take as long on a busy machine, not as many.
	warmSlow, slow := countFrom(warm.Latency.Histogram(), 19000), countFrom(m.Total.Hist, 19000)
	if warmSlow == 0 || slow*2 >= warmSlow {
		t.Errorf("requests of 19 ms or more: %d in the warm-up, %d in the result; want the warm-up's, not the result's", warmSlow, slow)
	}
	if warm.Requests == 0 || m.Complete == 0 {
		t.Fatalf("%d requests in the warm-up, %d measured: want both", warm.Requests, m.Complete)
	}
	sum := tl.Sum()
	if sum.Requests != m.Complete+warm.Requests || sum.Latency.Count != m.Total.Count+warm.Latency.Count ||
		sum.Bytes != m.TotalReceivedBytes+warm.Bytes || sum.Failures.Total() != m.Failed+warm.Failures.Total() {
		t.Errorf("timeline: %d requests, %d latencies, %d bytes, %d failed; result %d, %d, %d, %d plus warm-up %d, %d, %d, %d",
			sum.Requests, sum.Latency.Count, sum.Bytes, sum.Failures.Total(),
			m.Complete, m.Total.Count, m.TotalReceivedBytes, m.Failed,
			warm.Requests, warm.Latency.Count, warm.Bytes, warm.Failures.Total())
	}
	if got := m.StatusCodes[200]; got != m.Complete {
		t.Errorf("status 200 counted %d times, want the %d measured requests", got, m.Complete)
	}
	t.Logf("warm-up: %d requests, %d of 19 ms or more; measured: %d requests in %v, %d of 19 ms or more, p99 %d µs",
		warm.Requests, warmSlow, m.Complete, m.Elapsed, slow, m.Total.Hist.ValueAtQuantile(99))
}

// countFrom is how many of h's values are at least v (within h's
// precision).
func countFrom(h *hdrhistogram.Histogram, v int64) int64 {
	var n int64
	for _, b := range h.Distribution() {
		if b.From >= v {
			n += b.Count
		}
	}
	return n
}

// TestWarmupInTheOpenModel: at 200 starts a second, 1 s of warm-up and
// 1 s measured, the result holds about a second's requests and rate,
// while the timeline's intended starts cover both.
func TestWarmupInTheOpenModel(t *testing.T) {
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	m, err := Run(context.Background(), measure.Plan{
		URLs: []string{url + "/"}, Concurrency: 4, KeepAlive: true, Rate: 200,
		Duration: time.Second, Warmup: time.Second, TimelineInterval: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := m.Timeline.Sum()
	if sum.Intended != 400 {
		t.Errorf("the timeline's intended starts = %d, want 400 (2 s at 200/s)", sum.Intended)
	}
	if m.Complete < 180 || m.Complete > 220 || sum.Requests < m.Complete+180 {
		t.Errorf("%d measured requests of %d in the timeline, want about 200 of about 400", m.Complete, sum.Requests)
	}
	if r := m.Open.AchievedRate; r < 180 || r > 220 {
		t.Errorf("achieved rate = %.1f/s over the window, want about 200", r)
	}
}
