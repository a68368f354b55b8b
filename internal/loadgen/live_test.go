package loadgen

import (
	"context"
	"math"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// TestLiveIntervalsEqualTimeline: with Plan.OnInterval set, the intervals
// are handed out in order, each once, most of them while the run still
// goes, and each equals the stored timeline's interval of the same index,
// count for count and bucket for bucket; the run's totals are unchanged.
// The cases cover the closed model with errors (every fifth answer a 500,
// so non-2xx and successes differ), a target slower than the interval (a
// worker holds its records for several intervals), and the open model.
func TestLiveIntervalsEqualTimeline(t *testing.T) {
	var n atomic.Int64
	mixed := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		if n.Add(1)%5 == 0 {
			ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		}
		time.Sleep(time.Millisecond)
		ctx.SetBodyString("ok")
	})
	slow := testservers.StartTarget(t, "slow", 350*time.Millisecond)
	for _, tc := range []struct {
		name string
		plan measure.Plan
	}{
		{"closed with errors", measure.Plan{URLs: []string{mixed + "/"}, Concurrency: 4, KeepAlive: true, Duration: 2 * time.Second, TimelineInterval: 250 * time.Millisecond}},
		{"slower than the interval", measure.Plan{URLs: []string{slow.URL}, Concurrency: 3, KeepAlive: true, Duration: 2 * time.Second, TimelineInterval: 100 * time.Millisecond}},
		{"open model", measure.Plan{URLs: []string{mixed + "/"}, Concurrency: 4, KeepAlive: true, Rate: 300, Duration: 2 * time.Second, TimelineInterval: 250 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []measure.ClosedInterval
			var at []time.Time
			p := tc.plan
			p.OnInterval = func(c measure.ClosedInterval) {
				mu.Lock()
				defer mu.Unlock()
				got, at = append(got, c), append(at, time.Now())
			}
			began := time.Now()
			m, err := Run(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			checkTimelineSums(t, tc.name, m)
			mu.Lock()
			defer mu.Unlock()
			tl := m.Timeline
			if len(got) != len(tl.Intervals) {
				t.Fatalf("%d intervals handed out, the timeline has %d", len(got), len(tl.Intervals))
			}
			during := 0
			for i, c := range got {
				if c.Index != i || c.Length != tl.Interval || !c.Start.Equal(tl.Start) {
					t.Fatalf("hand-out %d is interval %d of %v from %v; want %d of %v from %v", i, c.Index, c.Length, c.Start, i, tl.Interval, tl.Start)
				}
				if at[i].Before(began.Add(p.Duration)) {
					during++
				}
				want := tl.Intervals[i]
				if p.Rate > 0 { // documented: may still grow after the hand-out
					c.Interval.Started, c.Interval.Late, c.Interval.MaxSendLag = want.Started, want.Late, want.MaxSendLag
				}
				if !sameInterval(c.Interval, want) {
					t.Errorf("interval %d handed out as %+v, stored as %+v", i, c.Interval, want)
				}
			}
			// The last intervals close as the run ends, the rest while it
			// goes: an interval closes once settled and once the workers
			// handed over its records (at worst with their next request's
			// end, 350 ms later on the slow target).
			lag := settleDelay + livePoll + 400*time.Millisecond
			wantDuring := len(got) - int(lag/tl.Interval) - 1
			if during < wantDuring || during == 0 {
				t.Errorf("%d of %d intervals arrived while the run went, want at least %d", during, len(got), wantDuring)
			}
			t.Logf("%d intervals of %v, %d during the run; %d requests", len(got), tl.Interval, during, m.Complete)
		})
	}
}

// sameInterval compares two intervals, their latencies by histogram
// bucket rather than by the span kept.
func sameInterval(a, b measure.Interval) bool {
	ha, hb := a.Latency.Histogram().Export().Counts, b.Latency.Histogram().Export().Counts
	a.Latency.Offset, a.Latency.Counts, b.Latency.Offset, b.Latency.Counts = 0, nil, 0, nil
	return reflect.DeepEqual(a, b) && slices.Equal(ha, hb)
}

// TestLiveIntervalsOff: without a timeline there is nothing to hand out,
// and the hook is never called.
func TestLiveIntervalsOff(t *testing.T) {
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	var calls atomic.Int64
	p := measure.Plan{URLs: []string{url + "/"}, Requests: 200, Concurrency: 2,
		OnInterval: func(measure.ClosedInterval) { calls.Add(1) }}
	if _, err := runWith(context.Background(), p, false); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("OnInterval called %d times for a run without a timeline", n)
	}
}

// TestLiveIntervalsPastTheCap drives the live timeline by hand over two
// shards, one of which has coarsened past MaxTimelineIntervals and one not
// yet: the intervals are handed out on the coarser grid, each once, and
// equal the run's merged timeline; the first hand-out before any
// coarsening stays on the fine grid.
func TestLiveIntervalsPastTheCap(t *testing.T) {
	origin := time.Now().Add(-3 * time.Hour)
	e := &engine{recordTimeline: true, origin: origin, start: origin, timelineInterval: time.Second,
		stopCh: make(chan struct{})}
	var got []measure.ClosedInterval
	e.plan.OnInterval = func(c measure.ClosedInterval) { got = append(got, c) }
	for range 2 {
		s := newShard(false)
		s.timeline = newTimelineRecorder(origin, time.Second)
		e.shards = append(e.shards, s)
	}
	w := &worker{e: e}
	w.pending.Store(math.MaxInt64)
	e.workers = []*worker{w}
	rec := func(s *shard, at time.Duration, total int64) {
		s.add([]record{{kind: recCompleted, status: 200, total: total, at: int64(at), handshake: -1, started: -1}}, false)
	}
	l := &liveTimeline{e: e}
	// An hour less ten seconds on both shards: fine intervals.
	for sec := range 3590 {
		rec(e.shards[0], time.Duration(sec)*time.Second+time.Millisecond, int64(100+sec%7))
		rec(e.shards[1], time.Duration(sec)*time.Second+500*time.Millisecond, int64(2000+sec%5))
	}
	l.closeSettled(origin.Add(3590*time.Second + settleDelay))
	if len(got) != 3590 || got[3589].Length != time.Second {
		t.Fatalf("%d intervals handed out before the cap, the last of %v; want 3590 of 1s", len(got), got[len(got)-1].Length)
	}
	// Past the cap on shard 0 only: it coarsens to 2 s, shard 1 stays at 1 s.
	for sec := 3590; sec < 5000; sec++ {
		rec(e.shards[0], time.Duration(sec)*time.Second+time.Millisecond, 300)
		if sec < 3599 {
			rec(e.shards[1], time.Duration(sec)*time.Second+500*time.Millisecond, 4000)
		}
	}
	if e.shards[0].timeline.tl.Interval != 2*time.Second || e.shards[1].timeline.tl.Interval != time.Second {
		t.Fatalf("shard intervals %v and %v, want 2s and 1s", e.shards[0].timeline.tl.Interval, e.shards[1].timeline.tl.Interval)
	}
	l.closeSettled(origin.Add(4000*time.Second + settleDelay))
	tl := e.timeline()
	before := 3590
	for i, c := range got[before:] {
		if c.Length != 2*time.Second || c.Index != before/2+i {
			t.Fatalf("hand-out %d is interval %d of %v; want %d of 2s", before+i, c.Index, c.Length, before/2+i)
		}
		if !sameInterval(c.Interval, tl.Intervals[c.Index]) {
			t.Errorf("interval %d of 2s handed out as %+v, merged as %+v", c.Index, c.Interval, tl.Intervals[c.Index])
		}
	}
	if n := len(got) - before; n != (4000-3590)/2 {
		t.Errorf("%d intervals of 2s handed out up to 4000 s, want %d", n, (4000-3590)/2)
	}
	// The fine ones equal the merged timeline's, pairwise.
	for k := 0; k < before/2; k++ {
		var pair measure.Interval
		pair.Merge(&got[2*k].Interval)
		pair.Merge(&got[2*k+1].Interval)
		if !sameInterval(pair, tl.Intervals[k]) {
			t.Fatalf("intervals %d and %d of 1s add up to %+v, merged 2 s interval %d is %+v", 2*k, 2*k+1, pair, k, tl.Intervals[k])
		}
	}
}
