package worker_test

import (
	"net"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/testservers"
)

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestCancelStopsRunningLoadWithinASecond cancels during a long run: the
// target must see no request from one second after the cancel on, the job
// ends canceled and keeps the run that had finished and, flagged partial,
// the one it stopped.
func TestCancelStopsRunningLoadWithinASecond(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 2*time.Millisecond)
	// Point 0: 40 requests (finishes at once); point 1: a million (runs
	// until canceled).
	j, task := e.create(t, closedSpec([]int{2}, []int{40, 1_000_000}, 1, tg))
	e.enqueue(t, task)
	e.startWorker(t)

	e.waitJob(t, j.ID, 20*time.Second, "the long run under way", func(j *job.Job) bool {
		return j.Progress.RunsDone == 1 && j.Progress.RequestsDone > 50
	})
	cancelAt := time.Now()
	if _, err := e.requestCancel(t.Context(), j.ID); err != nil {
		t.Fatalf("cancel = %v", err)
	}
	got := e.waitJob(t, j.ID, 10*time.Second, "canceled", terminal)
	time.Sleep(time.Until(cancelAt.Add(1500 * time.Millisecond)))
	last := tg.LastHit()
	if stop := last.Sub(cancelAt); stop > time.Second {
		t.Errorf("last request reached the target %v after the cancel, want within 1s", stop)
	}
	t.Logf("load stopped %v after the cancel", last.Sub(cancelAt))
	if got.Status != job.StatusCanceled {
		t.Errorf("status = %s, want canceled", got.Status)
	}
	// The finished run, and the one the cancel stopped with what it had
	// measured, as ab keeps its report on Ctrl-C.
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs after cancel = %+v, %v; want the finished run of point 0 and the partial run of point 1", runs, err)
	}
	if r := runs[0]; r.Point != 0 || r.Partial || r.Result.CompleteRequests != 40 {
		t.Errorf("first run = point %d partial %v with %d requests; want point 0, whole, 40", r.Point, r.Partial, r.Result.CompleteRequests)
	}
	if r := runs[1]; r.Point != 1 || !r.Partial || !r.Result.Canceled || r.Result.CompleteRequests < 50 || r.Result.CompleteRequests >= 1_000_000 {
		t.Errorf("second run = point %d partial %v canceled %v with %d requests; want point 1, partial, what it measured", r.Point, r.Partial, r.Result.Canceled, r.Result.CompleteRequests)
	}
	if a := analysis.Analyze(j.Spec, runs); a.Points[1].Runs != 0 || a.Points[0].Runs != 1 {
		t.Errorf("analysis counts %d and %d runs, want 1 and 0: a partial run takes no part", a.Points[0].Runs, a.Points[1].Runs)
	}
	assertEventsEnd(t, e.st, j.ID, job.StatusCanceled, 2)
}

// TestQueuedJobCanceledNeverStarts cancels before any worker runs: the
// task completes without a single request to the target.
func TestQueuedJobCanceledNeverStarts(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 0)
	j, task := e.create(t, closedSpec([]int{1}, []int{100}, 3, tg))
	e.enqueue(t, task)
	if _, err := e.requestCancel(t.Context(), j.ID); err != nil {
		t.Fatalf("cancel = %v", err)
	}
	e.startWorker(t)

	insp := asynq.NewInspectorFromRedisClient(e.rdb)
	deadline := time.Now().Add(15 * time.Second)
	for {
		info, err := insp.GetTaskInfo(queue.QueueJobs, j.ID)
		if err == nil && info.State == asynq.TaskStateCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task of canceled job not completed within 15s: %+v, %v", info, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, _ := e.st.GetJob(t.Context(), j.ID)
	if got.Status != job.StatusCanceled || got.StartedAt != nil {
		t.Errorf("job = %s started %v, want canceled, never started", got.Status, got.StartedAt)
	}
	if n := tg.Hits(); n != 0 {
		t.Errorf("target received %d requests, want 0", n)
	}
}
