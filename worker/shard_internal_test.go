package worker

import (
	"log/slog"
	"math"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/api"
	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
)

// shardEnv is a real redis-server and worker processes' worth of
// Workers on it: each has its own Redis client and worker id, as separate
// processes do.
type shardEnv struct {
	rs  *redistest.Server
	st  *store.Store
	log *slog.Logger

	mu      sync.Mutex
	samples map[int][]measure.Sample       // by shard, every measurement recorded
	shards  map[int][]*measure.Measurement // by shard
}

func newShardEnv(t *testing.T) *shardEnv {
	t.Helper()
	rs := redistest.Start(t)
	return &shardEnv{
		rs: rs, st: store.New(rs.Client(t), store.Options{}),
		log:     slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
		samples: map[int][]measure.Sample{}, shards: map[int][]*measure.Measurement{},
	}
}

// startWorkers runs n Workers until the test ends.
func (e *shardEnv) startWorkers(t *testing.T, n int, cfg Config) {
	t.Helper()
	cfg.Logger = e.log
	cfg.ShutdownTimeout = 2 * time.Second
	for range n {
		rdb := e.rs.Client(t)
		w := New(rdb, store.New(rdb, store.Options{}), cfg)
		w.runner.recordShard = func(shard int, m *measure.Measurement) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.samples[shard] = append(e.samples[shard], m.Samples...)
			e.shards[shard] = append(e.shards[shard], m)
		}
		RunInTest(t, w)
	}
}

// submit stores and enqueues a job as the API does.
func (e *shardEnv) submit(t *testing.T, spec job.Spec) *job.Job {
	t.Helper()
	spec = spec.WithDefaults()
	if err := spec.Validate(job.DefaultLimits(), nil); err != nil {
		t.Fatalf("Validate = %v", err)
	}
	j := job.New(job.NewID(), "", spec, time.Now().UTC())
	if err := e.st.CreateJob(t.Context(), j); err != nil {
		t.Fatal(err)
	}
	task, err := queue.NewJobRunTask(j.ID, spec.Estimate())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asynq.NewClientFromRedisClient(e.rs.Client(t)).EnqueueContext(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	return j
}

func (e *shardEnv) wait(t *testing.T, id string, limit time.Duration) *job.Job {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j, err := e.st.GetJob(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if j.Status.Terminal() {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %s", id, j.Status, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func shardedSpec(url string, concurrency, requests, shards int) job.Spec {
	return job.Spec{
		Targets: []job.Target{{Name: "t", URL: url}},
		Sweep:   job.Sweep{Concurrency: []int{concurrency}, Requests: []int{requests}, Shards: shards},
	}
}

// TestShardedRunMergesExactly runs one point on three Workers and checks
// the merged run against every shard's raw samples: counts and bytes add,
// the percentiles are the ones of all samples together (to HdrHistogram's
// precision), the connection times' extremes exact; the threshold judges
// the merged run.
func TestShardedRunMergesExactly(t *testing.T) {
	e := newShardEnv(t)
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("hello shards") })
	e.startWorkers(t, 3, Config{JobLease: 2 * time.Second})
	spec := shardedSpec(url+"/", 6, 3000, 3)
	// Only the merged run has 3000 requests: a shard has 1000.
	spec.Thresholds = []string{"complete >= 3000"}
	j := e.submit(t, spec)
	got := e.wait(t, j.ID, time.Minute)
	if got.Status != job.StatusSucceeded || got.Verdict != "pass" {
		t.Fatalf("job = %s (%s), verdict %q; want succeeded, pass", got.Status, got.Error, got.Verdict)
	}
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %d, %v; want 1", len(runs), err)
	}
	res := runs[0].Result
	jobtest.CheckShardedRun(t, runs[0], 3, 3000, 6)

	e.mu.Lock()
	defer e.mu.Unlock()
	var all []measure.Sample
	var bytes int64
	for i := range 3 {
		if len(e.shards[i]) != 1 {
			t.Fatalf("shard %d measured %d times, want once", i, len(e.shards[i]))
		}
		all = append(all, e.samples[i]...)
		bytes += e.shards[i][0].TotalReceivedBytes
	}
	if len(all) != 3000 {
		t.Fatalf("%d samples, want 3000", len(all))
	}
	if res.TotalTransferredBytes != bytes {
		t.Errorf("total transferred %d, want the shards' sum %d", res.TotalTransferredBytes, bytes)
	}
	checkPercentiles(t, res, all)
}

// checkPercentiles compares ab's percentiles and connection times of res
// with the ones ab computes from the sorted samples: the value at index
// ⌊n·p/100⌋, the longest for 100 %. A histogram bucket stands for its
// samples to within 0.1 % (three significant digits), plus the µs of
// rounding.
func checkPercentiles(t *testing.T, res *abreport.Report, samples []measure.Sample) {
	t.Helper()
	us := make([]int64, len(samples))
	for i, s := range samples {
		us[i] = s.Total.Microseconds()
	}
	slices.Sort(us)
	n := int64(len(us))
	got := []float64{res.PercentilesMs.P50, res.PercentilesMs.P66, res.PercentilesMs.P75, res.PercentilesMs.P80,
		res.PercentilesMs.P90, res.PercentilesMs.P95, res.PercentilesMs.P98, res.PercentilesMs.P99, res.PercentilesMs.P100}
	for i, p := range []int64{50, 66, 75, 80, 90, 95, 98, 99, 100} {
		want := us[n-1]
		if p < 100 {
			want = us[n*p/100]
		}
		wantMs := float64(want) / 1000
		if d := math.Abs(got[i] - wantMs); d > wantMs*0.001+0.001 {
			t.Errorf("p%d = %.3f ms, want %.3f ms from the samples", p, got[i], wantMs)
		}
	}
	if min, max := float64(us[0])/1000, float64(us[n-1])/1000; res.ConnectionTimesMs.Total.Min != min || res.ConnectionTimesMs.Total.Max != max {
		t.Errorf("total min/max = %v/%v ms, want %v/%v ms exactly", res.ConnectionTimesMs.Total.Min, res.ConnectionTimesMs.Total.Max, min, max)
	}
}

// TestShardedRunTooFewWorkers: with two workers for three shards the job
// waits the shard wait, then fails saying how many it needed and found,
// and the waiting shard's load never started.
func TestShardedRunTooFewWorkers(t *testing.T) {
	e := newShardEnv(t)
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("x") })
	e.startWorkers(t, 2, Config{JobLease: 2 * time.Second, ShardWait: time.Second})
	start := time.Now()
	j := e.submit(t, shardedSpec(url+"/", 3, 30, 3))
	got := e.wait(t, j.ID, 30*time.Second)
	took := time.Since(start)
	if got.Status != job.StatusFailed || !strings.Contains(got.Error, "needed 3 free worker processes at once, found 2") {
		t.Fatalf("job = %s (%q), want failed saying it needed 3 and found 2", got.Status, got.Error)
	}
	if took < time.Second {
		t.Errorf("job failed after %s, before the 1s shard wait", took)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.shards) != 0 {
		t.Errorf("%d shards measured a load, want none before the barrier", len(e.shards))
	}
}

// apiClient serves the API in process on e's store and queue, in the open
// mode, and returns a client of it and its URL: what a test that submits
// and reads through the front door needs.
func (e *shardEnv) apiClient(t *testing.T) (*client.Client, string) {
	t.Helper()
	srv := api.New(api.Config{OpenUntilFirstKey: true, CheckURL: func(*url.URL) error { return nil }},
		api.Deps{Store: e.st, Queue: asynq.NewClientFromRedisClient(e.rs.Client(t))})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	c, err := client.New(hs.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	return c, hs.URL
}
