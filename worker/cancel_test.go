package worker_test

import (
	"net"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
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
// ends canceled and keeps the run that had finished.
func TestCancelStopsRunningLoadWithinASecond(t *testing.T) {
	e := newEnv(t)
	tg := startTarget(t, 2*time.Millisecond)
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
	last := time.Unix(0, tg.last.Load())
	if stop := last.Sub(cancelAt); stop > time.Second {
		t.Errorf("last request reached the target %v after the cancel, want within 1s", stop)
	}
	t.Logf("load stopped %v after the cancel", last.Sub(cancelAt))
	if got.Status != job.StatusCanceled {
		t.Errorf("status = %s, want canceled", got.Status)
	}
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 1 || runs[0].Point != 0 || runs[0].Result.CompleteRequests != 40 {
		t.Errorf("runs after cancel = %+v, %v; want only the finished run of point 0 (40 requests)", runs, err)
	}
	assertEventsEnd(t, e.st, j.ID, job.StatusCanceled, 1)
}

// TestQueuedJobCanceledNeverStarts cancels before any worker runs: the
// task completes without a single request to the target.
func TestQueuedJobCanceledNeverStarts(t *testing.T) {
	e := newEnv(t)
	tg := startTarget(t, 0)
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
	if n := tg.hits.Load(); n != 0 {
		t.Errorf("target received %d requests, want 0", n)
	}
}
