package worker

import (
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// TestShardedRunTimelineIsShardsSum runs a timed point on three Workers
// with the spec's timeline interval: the stored run's timeline is cut at
// that interval, each of its intervals is the sum of the shards' same
// interval, bucket for bucket, and the intervals add up to the run.
func TestShardedRunTimelineIsShardsSum(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2 s sharded run")
	}
	e := newShardEnv(t)
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("hello timeline") })
	e.startWorkers(t, 3, Config{JobLease: 2 * time.Second})
	spec := shardedSpec(url+"/", 3, 0, 3)
	spec.Sweep.Requests = nil
	spec.Sweep.Duration = []job.Duration{job.Duration(2 * time.Second)}
	spec.Timeline = &job.Timeline{Interval: job.Duration(250 * time.Millisecond)}
	j := e.submit(t, spec)
	if got := e.wait(t, j.ID, time.Minute); got.Status != job.StatusSucceeded {
		t.Fatalf("job = %s (%s), want succeeded", got.Status, got.Error)
	}
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %d, %v; want 1", len(runs), err)
	}
	m, err := runs[0].DecodeMeasurement()
	if err != nil {
		t.Fatal(err)
	}
	tl := m.Timeline
	if tl == nil || tl.Interval != 250*time.Millisecond || len(tl.Intervals) < 8 {
		t.Fatalf("stored timeline = %+v; want 8 or more intervals of 250ms", tl)
	}
	sum := tl.Sum()
	if sum.Requests != m.Complete || sum.Failures != m.Failures || sum.Bytes != m.TotalReceivedBytes || sum.Latency.Count != m.Total.Count {
		t.Errorf("intervals sum to %d requests, %+v, %d bytes; the run has %d, %+v, %d", sum.Requests, sum.Failures, sum.Bytes, m.Complete, m.Failures, m.TotalReceivedBytes)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var shards []*measure.Timeline
	for i := range 3 {
		if len(e.shards[i]) != 1 || e.shards[i][0].Timeline == nil {
			t.Fatalf("shard %d: %d measurements, want one with a timeline", i, len(e.shards[i]))
		}
		shards = append(shards, e.shards[i][0].Timeline)
	}
	for i, iv := range tl.Intervals {
		var want measure.Interval
		for _, s := range shards {
			if i < len(s.Intervals) {
				want.Merge(&s.Intervals[i])
			}
		}
		if !sameInterval(iv, want) {
			t.Errorf("interval %d = %+v; the shards' sum is %+v", i, iv, want)
		}
	}
	t.Logf("%d intervals of %v, %d requests; interval 4 holds %d", len(tl.Intervals), tl.Interval, sum.Requests, tl.Intervals[4].Requests)
}

func sameInterval(a, b measure.Interval) bool {
	la, lb := a.Latency, b.Latency
	if a.Requests != b.Requests || a.Succeeded != b.Succeeded || a.Failures != b.Failures || a.Non2xx != b.Non2xx || a.Bytes != b.Bytes ||
		la.Count != lb.Count || la.Max != lb.Max || la.Offset != lb.Offset || len(la.Counts) != len(lb.Counts) {
		return false
	}
	for k := range la.Counts {
		if la.Counts[k] != lb.Counts[k] {
			return false
		}
	}
	return true
}
