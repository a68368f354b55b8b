package worker_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

const archivedReason = "its task was archived after its last attempt"

// strand stores a job as a worker that died on its task's last attempt
// leaves it: started (its job.started event written, a quota slot held),
// then changed by leave, with its task archived as asynq's recoverer
// archives it once the lease expired.
func (e *env) strand(t *testing.T, leave func(id string) error) *job.Job {
	t.Helper()
	ctx := t.Context()
	j, task := e.create(t, closedSpec([]int{1}, []int{10}, 1, &testservers.Target{URL: "http://127.0.0.1:1/never-dialed"}))
	if _, err := e.st.ReserveActive(ctx, j.Owner, j.ID, 10); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.UpdateJob(ctx, j.ID, func(j *job.Job) error {
		return j.Transition(job.StatusRunning, time.Now().UTC())
	}); err != nil {
		t.Fatal(err)
	}
	if err := e.st.AppendEvent(ctx, j.ID, job.EventStarted, map[string]any{"status": job.StatusRunning}); err != nil {
		t.Fatal(err)
	}
	if leave != nil {
		if err := leave(j.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Scheduled, not pending: a running worker could dequeue a pending
	// task between the enqueue and the archive, and an active task cannot
	// be archived.
	if _, err := e.queue.EnqueueContext(ctx, task, asynq.ProcessIn(time.Hour)); err != nil {
		t.Fatalf("Enqueue = %v", err)
	}
	if err := asynq.NewInspectorFromRedisClient(e.rdb).ArchiveTask(queue.QueueJobs, j.ID); err != nil {
		t.Fatalf("ArchiveTask = %v", err)
	}
	return j
}

// runJanitors starts n workers, whose janitors pass every 20 ms, telling
// told; they stop when the test ends.
func (e *env) runJanitors(t *testing.T, n int, told worker.Notifier) {
	t.Helper()
	for range n {
		w := worker.New(e.rdb, e.st, worker.Config{Logger: e.log, ShutdownTimeout: 2 * time.Second,
			Notifier: told, JanitorInterval: 20 * time.Millisecond})
		worker.RunInTest(t, w)
	}
}

// waitNotices waits until told has heard n events.
func waitNotices(t *testing.T, told *notices, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(told.got()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("notices %v after 10 s, want %d", told.got(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestJanitorEndsJobOfArchivedTask: a job whose worker died on its task's
// last attempt (no handler ran; asynq archived the task) is ended by the
// janitor: failed with the reason, or canceled when its cancel was
// requested, its quota slot freed, its event stream ended, and its end
// notified once although two workers' janitors race for it.
func TestJanitorEndsJobOfArchivedTask(t *testing.T) {
	tests := []struct {
		name  string
		leave func(e *env) func(id string) error
		want  job.Status
	}{
		{"left running", nil, job.StatusFailed},
		{"handed back, then died", func(e *env) func(string) error {
			return func(id string) error {
				_, err := e.st.UpdateJob(context.Background(), id, func(j *job.Job) error {
					return j.Transition(job.StatusQueued, time.Now().UTC())
				})
				return err
			}
		}, job.StatusFailed},
		{"cancel requested", func(e *env) func(string) error {
			return func(id string) error {
				_, err := e.requestCancel(context.Background(), id)
				return err
			}
		}, job.StatusCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var leave func(string) error
			if tt.leave != nil {
				leave = tt.leave(e)
			}
			j := e.strand(t, leave)
			told := &notices{}
			e.runJanitors(t, 2, told)

			waitNotices(t, told, 1)
			got := e.waitJob(t, j.ID, 10*time.Second, "terminal", terminal)
			if got.Status != tt.want || got.FinishedAt == nil {
				t.Errorf("job is %s (%q), finished %v; want %s with a finish time", got.Status, got.Error, got.FinishedAt, tt.want)
			}
			if tt.want == job.StatusFailed && !strings.Contains(got.Error, archivedReason) {
				t.Errorf("job error %q, want it to say %q", got.Error, archivedReason)
			}
			if active, err := e.st.ActiveJobs(t.Context(), j.Owner); err != nil || active != 0 {
				t.Errorf("ActiveJobs = %d, %v; want the slot freed", active, err)
			}
			assertEventsEnd(t, e.st, j.ID, tt.want, 0)

			// Another stranded job, ended by a later pass: by then the
			// first was passed over again, and must not be told twice.
			sentinel := e.strand(t, nil)
			waitNotices(t, told, 2)
			e.waitJob(t, sentinel.ID, 10*time.Second, "failed", func(j *job.Job) bool { return j.Status == job.StatusFailed })
			if want := []string{job.EventFor(tt.want), job.EventFailed}; !slices.Equal(told.got(), want) {
				t.Errorf("notices %v, want %v: each end told once", told.got(), want)
			}
		})
	}
}

// TestJanitorLeavesEndedJob: an archived task whose job already ended (the
// last attempt's handler ended it) is passed over: no write, no notice.
func TestJanitorLeavesEndedJob(t *testing.T) {
	e := newEnv(t)
	ended := e.strand(t, func(id string) error {
		_, err := e.st.UpdateJob(context.Background(), id, func(j *job.Job) error {
			return j.Transition(job.StatusSucceeded, time.Now().UTC())
		})
		return err
	})
	before, err := e.st.GetJob(t.Context(), ended.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Archived after the ended job's task, so a pass that ended it has
	// looked at the ended one first.
	sentinel := e.strand(t, nil)
	told := &notices{}
	e.runJanitors(t, 1, told)

	waitNotices(t, told, 1)
	e.waitJob(t, sentinel.ID, 10*time.Second, "failed", func(j *job.Job) bool { return j.Status == job.StatusFailed })
	if want := []string{job.EventFailed}; !slices.Equal(told.got(), want) {
		t.Errorf("notices %v, want only the stranded job's %v", told.got(), want)
	}
	after, err := e.st.GetJob(t.Context(), ended.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Status != job.StatusSucceeded || after.Error != "" || after.FinishedAt == nil || !after.FinishedAt.Equal(*before.FinishedAt) {
		t.Errorf("ended job is now %s (%q), finished %v; want it untouched: succeeded at %v", after.Status, after.Error, after.FinishedAt, before.FinishedAt)
	}
}

// TestJanitorLeavesSupersededTask: an archived task whose job a resume
// task took over is not the job's any more; the job, running under the
// resume task's attempt, is left alone.
func TestJanitorLeavesSupersededTask(t *testing.T) {
	e := newEnv(t)
	resumed := e.strand(t, func(id string) error {
		e.takeOver(t, id, "other/1", id+":resume:1")
		return nil
	})
	sentinel := e.strand(t, nil) // archived after: a pass that ended it looked at the first
	told := &notices{}
	e.runJanitors(t, 1, told)

	waitNotices(t, told, 1)
	e.waitJob(t, sentinel.ID, 10*time.Second, "failed", func(j *job.Job) bool { return j.Status == job.StatusFailed })
	got, err := e.st.GetJob(t.Context(), resumed.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusRunning || got.Error != "" || got.Holder != "other/1" {
		t.Errorf("resumed job is %s (%q) held by %q, want it running under the resume task's attempt", got.Status, got.Error, got.Holder)
	}
	if want := []string{job.EventFailed}; !slices.Equal(told.got(), want) {
		t.Errorf("notices %v, want only the stranded job's %v", told.got(), want)
	}
}
