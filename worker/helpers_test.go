package worker_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobend"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// env is one test's Redis, store and queue client.
type env struct {
	rdb   *redis.Client
	st    *store.Store
	queue *asynq.Client
	log   *slog.Logger
}

func newEnv(t *testing.T) *env {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	return &env{
		rdb:   rdb,
		st:    store.New(rdb, store.Options{}),
		queue: asynq.NewClientFromRedisClient(rdb),
		log:   slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// create stores a queued job for spec and returns it with its task.
func (e *env) create(t *testing.T, spec job.Spec) (*job.Job, *asynq.Task) {
	t.Helper()
	return e.createAs(t, "", spec)
}

// requestCancel cancels job id as DELETE /v1/jobs/{id} does.
func (e *env) requestCancel(ctx context.Context, id string) (*job.Job, error) {
	return jobend.New(e.st, nil, e.log).Cancel(ctx, id)
}

// createAs is create for a job of owner.
func (e *env) createAs(t *testing.T, owner string, spec job.Spec) (*job.Job, *asynq.Task) {
	t.Helper()
	spec = spec.WithDefaults()
	j := job.New(job.NewID(), owner, spec, time.Now().UTC())
	if err := e.st.CreateJob(t.Context(), j); err != nil {
		t.Fatalf("CreateJob = %v", err)
	}
	task, err := queue.NewJobRunTask(j.ID, spec.Estimate())
	if err != nil {
		t.Fatalf("NewJobRunTask = %v", err)
	}
	return j, task
}

func (e *env) enqueue(t *testing.T, task *asynq.Task) {
	t.Helper()
	if _, err := e.queue.EnqueueContext(t.Context(), task); err != nil {
		t.Fatalf("Enqueue = %v", err)
	}
}

// startWorker runs a Worker until the test ends.
func (e *env) startWorker(t *testing.T) {
	t.Helper()
	e.startWorkerWith(t, worker.Config{})
}

// startWorkerWith runs a Worker configured as cfg (its logger is the
// env's) until the test ends.
func (e *env) startWorkerWith(t *testing.T, cfg worker.Config) {
	t.Helper()
	cfg.Logger, cfg.ShutdownTimeout = e.log, 2*time.Second
	worker.RunInTest(t, worker.New(e.rdb, e.st, cfg))
}

// waitStatus polls the job until cond holds, failing after limit.
func (e *env) waitJob(t *testing.T, id string, limit time.Duration, what string, cond func(*job.Job) bool) *job.Job {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		j, err := e.st.GetJob(t.Context(), id)
		if err != nil {
			t.Fatalf("GetJob(%s) = %v", id, err)
		}
		if cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: %s not reached within %v; job is %s, progress %+v", id, what, limit, j.Status, j.Progress)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func terminal(j *job.Job) bool { return j.Status.Terminal() }

// closedSpec is a closed-model sweep over targets.
func closedSpec(concurrency, requests []int, repeats int, targets ...*testservers.Target) job.Spec {
	s := job.Spec{Sweep: job.Sweep{Concurrency: concurrency, Requests: requests, Repeats: repeats}}
	for i, tg := range targets {
		s.Targets = append(s.Targets, job.Target{Name: string(rune('a' + i)), URL: tg.URL})
	}
	return s
}

// runToSuccess creates spec's job, enqueues it, starts a Worker and waits
// (up to limit) for the job to end, failing unless it succeeded; the job
// as it ended.
func (e *env) runToSuccess(t *testing.T, spec job.Spec, limit time.Duration) *job.Job {
	t.Helper()
	j, task := e.create(t, spec)
	e.enqueue(t, task)
	e.startWorker(t)
	got := e.waitJob(t, j.ID, limit, "a terminal status", terminal)
	if got.Status != job.StatusSucceeded {
		t.Fatalf("job status = %s (error %q), want succeeded", got.Status, got.Error)
	}
	return got
}
