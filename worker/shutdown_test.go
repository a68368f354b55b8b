package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// runWorker starts a Worker on cfg (logging to the test's logger) and
// returns the function that shuts it down (as SIGTERM does in cmd/) and
// waits for it: every attempt in flight has returned then.
func (e *env) runWorker(t *testing.T, cfg worker.Config) (stop func()) {
	t.Helper()
	cfg.Logger = e.log
	w := worker.New(e.rdb, e.st, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var stopped bool
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Worker.Run = %v", err)
		}
	}
	t.Cleanup(stop)
	return stop
}

// TestShutdownLetsRunFinishThenHandsBack: the run under way when the
// worker is told to stop completes and is stored, no other run starts, the
// job goes back to queued, and another worker finishes it.
func TestShutdownLetsRunFinishThenHandsBack(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", time.Millisecond)
	j, task := e.create(t, closedSpec([]int{2}, []int{20, 2000}, 2, tg))
	e.enqueue(t, task)
	stop := e.runWorker(t, worker.Config{ShutdownTimeout: 10 * time.Second})

	e.waitJob(t, j.ID, 20*time.Second, "the second run under way", func(j *job.Job) bool {
		return j.Progress.RunsDone == 1 && j.Progress.RequestsDone > 0
	})
	stop()
	got, _ := e.st.GetJob(t.Context(), j.ID)
	runs, _ := e.st.Runs(t.Context(), j.ID)
	if got.Status != job.StatusQueued || len(runs) != 2 || runs[1].Result.CompleteRequests != 2000 {
		t.Fatalf("after shutdown: %s with %d runs, want queued with 2 runs (the one under way finished with 2000 requests)", got.Status, len(runs))
	}
	e.runWorker(t, worker.Config{ShutdownTimeout: 10 * time.Second})
	got = e.waitJob(t, j.ID, 30*time.Second, "a terminal status", terminal)
	runs, _ = e.st.Runs(t.Context(), j.ID)
	if got.Status != job.StatusSucceeded || len(runs) != 4 {
		t.Errorf("after the second worker: %s with %d runs, want succeeded with 4", got.Status, len(runs))
	}
}

// TestShutdownTimeoutDiscardsPartialRun: a run that outlasts the shutdown
// timeout is cut, not stored; the job is queued again and its finished
// runs stay.
func TestShutdownTimeoutDiscardsPartialRun(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 2*time.Millisecond)
	j, task := e.create(t, closedSpec([]int{2}, []int{20, 1_000_000}, 1, tg))
	e.enqueue(t, task)
	stop := e.runWorker(t, worker.Config{ShutdownTimeout: 300 * time.Millisecond})

	e.waitJob(t, j.ID, 20*time.Second, "the long run under way", func(j *job.Job) bool {
		return j.Progress.RunsDone == 1 && j.Progress.RequestsDone > 0
	})
	stop()
	got, _ := e.st.GetJob(t.Context(), j.ID)
	runs, _ := e.st.Runs(t.Context(), j.ID)
	if got.Status != job.StatusQueued || len(runs) != 1 || runs[0].Point != 0 {
		t.Errorf("after shutdown timeout: %s with runs %+v, want queued with only point 0's run", got.Status, runs)
	}
	if got.Progress.CurrentRun != nil || got.Progress.RunsDone != 1 {
		t.Errorf("progress after hand-back = %+v, want 1 run done and none current", got.Progress)
	}
}
