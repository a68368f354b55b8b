package worker_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/logbuf"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// takeOver plays another attempt taking job id over as after a crash: it
// takes the lease (the first holder's removed, as if it had run out) and
// starts the job under holder and task.
func (e *env) takeOver(t *testing.T, id, holder, task string) {
	t.Helper()
	if err := e.rdb.Del(t.Context(), "benchq:job:{"+id+"}:lease").Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.st.AcquireLease(t.Context(), id, holder, time.Minute); !ok || err != nil {
		t.Fatalf("AcquireLease = %v, %v", ok, err)
	}
	if _, err := e.st.UpdateJob(t.Context(), id, func(j *job.Job) error {
		_, err := j.Start(holder, task, job.CrashBudget{Stalled: 3, Total: 10}, time.Now().UTC())
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestLostLeaseStopsStaleAttempt: an attempt whose job another attempt
// took over (its lease gone, as when it was cut off from Redis for a whole
// lease) stops its load within the next renewal and records nothing: its
// hand-back is refused, logged at error level, and the job stays with the
// attempt that holds it.
func TestLostLeaseStopsStaleAttempt(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", time.Millisecond)
	j, task := e.create(t, closedSpec([]int{2}, []int{1_000_000}, 1, tg))
	logs := &logbuf.Buffer{}
	r := worker.NewRunner(e.st, worker.Config{JobLease: time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelError}))})
	done := make(chan error, 1)
	go func() { done <- r.HandleJobRun(context.Background(), task) }()
	e.waitJob(t, j.ID, 10*time.Second, "load under way", func(j *job.Job) bool { return j.Progress.RequestsDone > 0 })

	e.takeOver(t, j.ID, "other/1", j.ID+":resume:1")
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stale attempt still runs 5 s after losing its lease (renewals every 200 ms)")
	}
	if err != nil {
		t.Errorf("stale HandleJobRun = %v, want nil: the job is another attempt's", err)
	}
	hits := tg.Hits()
	time.Sleep(300 * time.Millisecond)
	if n := tg.Hits(); n != hits {
		t.Errorf("target got %d requests after the stale attempt returned, want none", n-hits)
	}
	got, _ := e.st.GetJob(t.Context(), j.ID)
	if got.Status != job.StatusRunning || got.Attempt != 2 || got.Holder != "other/1" {
		t.Errorf("job is %s at attempt %d held by %q, want running at attempt 2 held by other/1", got.Status, got.Attempt, got.Holder)
	}
	out := logs.String()
	for _, want := range []string{"level=ERROR", "job transition not recorded", "job=" + j.ID, "from=running", "to=queued", "attempt=1", "job: attempt no longer holds the job"} {
		if !strings.Contains(out, want) {
			t.Errorf("error log lacks %q:\n%s", want, out)
		}
	}
}

// TestSupersededTaskDoesNothing: a task whose job another task's live
// attempt holds (the dead attempt's own task, given back by asynq after a
// resume task took the job) returns at once without touching the job or
// the target.
func TestSupersededTaskDoesNothing(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 0)
	j, task := e.create(t, closedSpec([]int{1}, []int{10}, 1, tg))
	e.takeOver(t, j.ID, "other/1", j.ID+":resume:1")
	before, _ := e.st.GetJob(t.Context(), j.ID)
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	start := time.Now()
	if err := r.HandleJobRun(t.Context(), task); err != nil {
		t.Fatalf("HandleJobRun = %v, want nil", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("HandleJobRun took %s, want it to return at once", took)
	}
	got, _ := e.st.GetJob(t.Context(), j.ID)
	if got.Status != before.Status || got.Attempt != before.Attempt || got.Holder != before.Holder || tg.Hits() != 0 {
		t.Errorf("job %s at attempt %d held by %q, %d requests; want it untouched (%s, %d, %q) and no load",
			got.Status, got.Attempt, got.Holder, tg.Hits(), before.Status, before.Attempt, before.Holder)
	}
}

// TestJanitorResumesCrashedJob: a running job whose attempt died (no
// lease, its task stuck active in asynq, here absent) is resumed by a
// resume task within seconds, once although two workers' janitors see it,
// counting the crash; past the crash retries it is failed with the reason
// instead, and sends no load.
func TestJanitorResumesCrashedJob(t *testing.T) {
	tests := []struct {
		name    string
		crashes int // before this one
		want    job.Status
	}{
		{"resumed", 0, job.StatusSucceeded},
		{"crash loop", 2, job.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tg := testservers.StartTarget(t, "hello benchq", 0)
			j, _ := e.create(t, closedSpec([]int{1}, []int{50}, 2, tg))
			if _, err := e.st.UpdateJob(t.Context(), j.ID, func(j *job.Job) error {
				_, err := j.Start("dead/1", "", job.CrashBudget{}, time.Now().UTC())
				j.Crashes, j.StalledCrashes, j.Attempt = tt.crashes, tt.crashes, tt.crashes+1
				return err
			}); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				w := worker.New(e.rdb, e.st, worker.Config{Logger: e.log, ShutdownTimeout: 2 * time.Second,
					JobLease: time.Second, CrashRetries: 2})
				worker.RunInTest(t, w)
			}
			got := e.waitJob(t, j.ID, 10*time.Second, "a terminal status", terminal)
			if got.Status != tt.want {
				t.Fatalf("job %s (%q) at attempt %d, want %s", got.Status, got.Error, got.Attempt, tt.want)
			}
			switch tt.want {
			case job.StatusSucceeded:
				if got.Crashes != 1 || got.CurrentTask() != j.ID+":resume:1" || tg.Hits() != 100 {
					t.Errorf("crashes %d, task %q, %d requests; want 1 crash, the resume task of attempt 1, 100 requests (each run once)",
						got.Crashes, got.CurrentTask(), tg.Hits())
				}
			case job.StatusFailed:
				if !strings.Contains(got.Error, "died 3 times") || tg.Hits() != 0 {
					t.Errorf("error %q with %d requests, want it to say the worker died 3 times, and no load", got.Error, tg.Hits())
				}
			}
		})
	}
}
