package jobtest

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/queue"
)

// SweepSpec is targets × concurrency × one duration, one repeat: target i
// is named targets[i] and has the URL http://127.0.0.1:(18080+i)/.
func SweepSpec(conc []int, targets ...string) job.Spec {
	s := job.Spec{Sweep: job.Sweep{Concurrency: conc, Duration: []job.Duration{job.Duration(10 * time.Second)}, Repeats: 1}}
	for i, name := range targets {
		s.Targets = append(s.Targets, job.Target{Name: name, URL: fmt.Sprintf("http://127.0.0.1:%d/", 18080+i)})
	}
	return s
}

// Queue records the tasks it is given, or fails while SetErr says so.
// Its zero value is ready.
type Queue struct {
	mu    sync.Mutex
	tasks []*asynq.Task
	err   error
}

// SetErr makes every later EnqueueContext fail with err; nil makes it
// record again.
func (q *Queue) SetErr(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.err = err
}

// EnqueueContext records t, or returns the error SetErr set.
func (q *Queue) EnqueueContext(_ context.Context, t *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return nil, q.err
	}
	q.tasks = append(q.tasks, t)
	return &asynq.TaskInfo{Type: t.Type()}, nil
}

// Tasks is what was enqueued so far, in order.
func (q *Queue) Tasks() []*asynq.Task {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]*asynq.Task(nil), q.tasks...)
}

// JobIDs is the job of each task enqueued so far, in order; a task that
// is not a job run fails the test.
func (q *Queue) JobIDs(t testing.TB) []string {
	t.Helper()
	var ids []string
	for _, task := range q.Tasks() {
		p, err := queue.ParseJobRun(task)
		if err != nil {
			t.Fatalf("task %s: %v", task.Type(), err)
		}
		ids = append(ids, p.JobID)
	}
	return ids
}

// CheckShardedRun asserts one stored run measured as n shards: requests
// completed, none failed, at the point's concurrency; n shards from n
// distinct workers whose starts lie within 50 ms, their requests and
// concurrency summing to the point's.
func CheckShardedRun(t testing.TB, run job.Run, n int, requests int64, concurrency int) {
	t.Helper()
	if run.Result == nil {
		t.Fatalf("run %+v has no result", run.RunKey)
	}
	if res := run.Result; res.CompleteRequests != requests || res.FailedRequests != 0 || res.ConcurrencyLevel != concurrency {
		t.Errorf("result: %d complete, %d failed, concurrency level %d; want %d, 0, %d",
			res.CompleteRequests, res.FailedRequests, res.ConcurrencyLevel, requests, concurrency)
	}
	if len(run.Shards) != n {
		t.Fatalf("run has %d shards, want %d: %+v", len(run.Shards), n, run.Shards)
	}
	workers := map[string]bool{}
	var sum int64
	var conc int
	first, last := run.Shards[0].StartedAt, run.Shards[0].StartedAt
	for _, s := range run.Shards {
		workers[s.Worker] = true
		sum += s.CompleteRequests
		conc += s.Concurrency
		if s.StartedAt.Before(first) {
			first = s.StartedAt
		}
		if s.StartedAt.After(last) {
			last = s.StartedAt
		}
	}
	if len(workers) != n {
		t.Errorf("shards ran on %d distinct workers, want %d: %+v", len(workers), n, run.Shards)
	}
	if sum != requests || conc != concurrency {
		t.Errorf("shards sum to %d requests at concurrency %d, want %d at %d", sum, conc, requests, concurrency)
	}
	spread := last.Sub(first)
	t.Logf("%d shards on %d workers, starts spread over %s", n, len(workers), spread)
	if spread > 50*time.Millisecond {
		t.Errorf("shard starts spread over %s, want within 50ms: %+v", spread, run.Shards)
	}
}

// CheckQuantiles asserts that each phase of m (connect, processing,
// waiting, total) counts every one of samples and that its quantiles qs
// are the samples' own, the value at rank ⌈q·n⌉: within 0.1 % for a
// histogram's 3 significant digits, and 1 µs more, since the engine
// truncates each part of processing to µs on its own.
func CheckQuantiles(t testing.TB, m *measure.Measurement, samples []measure.Sample, qs ...float64) {
	t.Helper()
	for _, ph := range []struct {
		name  string
		phase *measure.Phase
		of    func(measure.Sample) time.Duration
	}{
		{"connect", &m.Connect, func(s measure.Sample) time.Duration { return s.Connect }},
		{"processing", &m.Processing, func(s measure.Sample) time.Duration { return s.Processing }},
		{"waiting", &m.Waiting, func(s measure.Sample) time.Duration { return s.Waiting }},
		{"total", &m.Total, func(s measure.Sample) time.Duration { return s.Total }},
	} {
		raw := make([]int64, len(samples))
		for i, s := range samples {
			raw[i] = ph.of(s).Microseconds()
		}
		slices.Sort(raw)
		if ph.phase.Count != int64(len(raw)) {
			t.Fatalf("%s: merged count %d, %d samples", ph.name, ph.phase.Count, len(raw))
		}
		for _, q := range qs {
			want := raw[max(0, int(math.Ceil(q*float64(len(raw))))-1)]
			if got, tol := ph.phase.Quantile(q), want/1000+1; got < want-tol || got > want+tol {
				t.Errorf("%s: merged Quantile(%v) = %d µs, the samples give %d µs (±%d)", ph.name, q, got, want, tol)
			}
		}
	}
}

// CheckSlowIntervals asserts that the intervals whose p50 is 10 ms or more
// run without a gap from within one interval of first to within one of
// last, and every other interval is fast.
func CheckSlowIntervals(t testing.TB, p50s []float64, first, last int) {
	t.Helper()
	lo, hi := -1, -1
	for i, p := range p50s {
		if p >= 10 {
			if lo < 0 {
				lo = i
			}
			hi = i
		}
	}
	if lo < first-1 || lo > first+1 || hi < last-1 || hi > last+1 {
		t.Fatalf("slow intervals %d..%d, want %d..%d ± 1: p50s %v", lo, hi, first, last, p50s)
	}
	for i := lo; i <= hi; i++ {
		if p50s[i] < 10 {
			t.Errorf("interval %d within the slow ones has p50 %v ms", i, p50s[i])
		}
	}
}
