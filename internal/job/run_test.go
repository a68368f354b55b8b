package job_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// stored runs r through JSON as the store keeps it.
func stored(t *testing.T, r *job.Run) job.Run {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back job.Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// TestMergeShards runs one point as three shards against a real loopback
// server, stores each as a run, and merges the stored runs: the merged
// result must be the one the in-memory merge of the shards' measurements
// gives, and its percentiles those of every shard's raw samples within the
// histograms' precision.
func TestMergeShards(t *testing.T) {
	var n atomic.Int64
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		i := n.Add(1)
		time.Sleep(time.Duration(i%5) * 150 * time.Microsecond)
		if i%9 == 0 {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
		}
		ctx.SetBodyString("shard")
	})
	k := job.RunKey{Point: 1, Repeat: 0}
	o := abreport.Options{BodySent: true}
	plan := measure.Plan{URLs: []string{url + "/"}, Requests: 200, Concurrency: 2, KeepAlive: true,
		Body: []byte("x=1"), RecordSamples: true}
	var inMemory measure.Measurement
	var samples []measure.Sample
	var shards []job.Run
	for i := range 3 {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		started := time.Now().UTC()
		m, err := loadgen.Run(ctx, plan)
		cancel()
		if err != nil || m.Complete != 200 {
			t.Fatalf("shard %d: Run = %d complete, %v", i, m.Complete, err)
		}
		run, err := job.NewRun(k, "a", plan.Concurrency, started, time.Now().UTC(), m, o)
		if err != nil {
			t.Fatalf("NewRun: %v", err)
		}
		shards = append(shards, stored(t, run))
		inMemory.Merge(m)
		samples = append(samples, m.Samples...)
	}
	merged, err := job.MergeShards(shards)
	if err != nil {
		t.Fatalf("MergeShards: %v", err)
	}
	if diff := cmp.Diff(abreport.FromMeasurement(&inMemory, o), merged.Result); diff != "" {
		t.Errorf("merged result differs from the merge of the measurements (-in memory +stored):\n%s", diff)
	}
	r := merged.Result
	if r.CompleteRequests != 600 || r.ConcurrencyLevel != 6 || merged.Concurrency != 6 || !r.BodySent {
		t.Errorf("merged result: %d complete at concurrency %d (run %d), body sent %v; want 600 at 6, true",
			r.CompleteRequests, r.ConcurrencyLevel, merged.Concurrency, r.BodySent)
	}
	if r.StatusCodes[404] == 0 || r.StatusCodes[200]+r.StatusCodes[404] != 600 {
		t.Errorf("merged status codes %v, want 600 of 200 and 404", r.StatusCodes)
	}
	if merged.RunKey != k || merged.Target != "a" || !merged.StartedAt.Equal(shards[0].StartedAt) || !merged.FinishedAt.Equal(shards[2].FinishedAt) {
		t.Errorf("merged run %v on %q from %v to %v; want %v on a from the first start to the last finish",
			merged.RunKey, merged.Target, merged.StartedAt, merged.FinishedAt, k)
	}
	back := stored(t, merged)
	m, err := back.DecodeMeasurement()
	if err != nil {
		t.Fatalf("merged run's measurement: %v", err)
	}
	jobtest.CheckQuantiles(t, m, samples, 0.5, 0.9, 0.99, 1)
}

func TestMergeShardsRefuses(t *testing.T) {
	m := &measure.Measurement{Concurrency: 1, Complete: 1, StatusCodes: map[int]int64{200: 1}}
	good, err := job.NewRun(job.RunKey{}, "a", 1, time.Now(), time.Now(), m, abreport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := *good
	old.Measurement = nil // stored before runs kept their measurement
	bad := *good
	bad.Measurement = json.RawMessage(`{"v": 99}`)
	other := *good
	other.Repeat = 1
	tests := []struct {
		name   string
		shards []job.Run
		want   error
	}{
		{"none", nil, job.ErrShardsDisagree},
		{"another run", []job.Run{*good, other}, job.ErrShardsDisagree},
		{"a run stored without its measurement", []job.Run{*good, old}, job.ErrNoMeasurement},
		{"a measurement that does not decode", []job.Run{bad}, measure.ErrBadEncoding},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r, err := job.MergeShards(tt.shards); !errors.Is(err, tt.want) {
				t.Errorf("MergeShards = %v, %v; want %v", r, err, tt.want)
			}
		})
	}
	one, err := job.MergeShards([]job.Run{*good})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(good.Result, one.Result); diff != "" {
		t.Errorf("one shard merged differs from itself:\n%s", diff)
	}
}
