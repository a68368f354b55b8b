package worker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// notices records what a runner tells its notifier.
type notices struct {
	mu     sync.Mutex
	events []string
}

func (n *notices) Notify(_ context.Context, _ *job.Job, event string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, event)
	return nil
}

func (n *notices) got() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.events...)
}

// TestLastAttemptFailsJob: a job:run attempt that ends in an error asynq
// would retry (here Redis refusing the job's runs key) queues the job for
// the retry while retries remain; on the last attempt it fails the job
// with the reason, frees its quota slot and sends job.failed, instead of
// leaving it running forever under an archived task.
func TestLastAttemptFailsJob(t *testing.T) {
	tests := []struct {
		name     string
		maxRetry int
		want     job.Status
		notified []string
	}{
		{"retries left", 1, job.StatusQueued, nil},
		{"last attempt", 0, job.StatusFailed, []string{job.EventFailed}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			j, task := e.create(t, closedSpec([]int{1}, []int{10}, 1, testservers.StartTarget(t, "hello benchq", 0)))
			if _, err := e.st.ReserveActive(t.Context(), j.Owner, j.ID, 10); err != nil {
				t.Fatal(err)
			}
			// A key of the wrong type: every read of the job's runs fails
			// as a Redis error does, and asynq would retry it.
			if err := e.rdb.Set(t.Context(), "benchq:job:{"+j.ID+"}:runs", "not a hash", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := e.queue.EnqueueContext(t.Context(), task, asynq.MaxRetry(tt.maxRetry)); err != nil {
				t.Fatal(err)
			}
			told := &notices{}
			w := worker.New(e.rdb, e.st, worker.Config{Logger: e.log, ShutdownTimeout: 2 * time.Second, Notifier: told})
			worker.RunInTest(t, w)

			insp := asynq.NewInspectorFromRedisClient(e.rdb)
			deadline := time.Now().Add(15 * time.Second)
			for {
				retry, _ := insp.ListRetryTasks(queue.QueueJobs)
				archived, _ := insp.ListArchivedTasks(queue.QueueJobs)
				if len(retry)+len(archived) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the attempt did not end within 15 s (retry %d, archived %d)", len(retry), len(archived))
				}
				time.Sleep(20 * time.Millisecond)
			}
			got, err := e.st.GetJob(t.Context(), j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.want {
				t.Errorf("job is %s (%q), want %s", got.Status, got.Error, tt.want)
			}
			active, _ := e.st.ActiveJobs(t.Context(), j.Owner)
			if ev := told.got(); strings.Join(ev, ",") != strings.Join(append([]string{job.EventStarted}, tt.notified...), ",") {
				t.Errorf("notified %v, want job.started then %v", ev, tt.notified)
			}
			if tt.want != job.StatusFailed {
				if active != 1 {
					t.Errorf("active jobs = %d, want 1 while the job waits for its retry", active)
				}
				return
			}
			if !strings.Contains(got.Error, "gave up on attempt 1 of 1") || !strings.Contains(got.Error, "WRONGTYPE") || got.FinishedAt == nil {
				t.Errorf("failed job error %q, finished %v; want the reason and a finish time", got.Error, got.FinishedAt)
			}
			if active != 0 {
				t.Errorf("active jobs = %d, want the slot freed", active)
			}
			assertEventsEnd(t, e.st, j.ID, job.StatusFailed, 0)
		})
	}
}

// flakyNotices fails the first end notice, as a Redis blip would.
type flakyNotices struct {
	notices
	failed bool
}

func (n *flakyNotices) Notify(ctx context.Context, j *job.Job, event string) error {
	n.mu.Lock()
	fail := event != job.EventStarted && !n.failed
	n.failed = n.failed || fail
	n.mu.Unlock()
	if fail {
		return errors.New("redis: connection reset")
	}
	return n.notices.Notify(ctx, j, event)
}

// TestLostEndNoticeIsRetried: when the notifier cannot queue a finished
// job's webhook, the task is retried about a second later, and the retry
// finds the job over and notifies again, so the webhook is not lost and
// the job's outcome is untouched.
func TestLostEndNoticeIsRetried(t *testing.T) {
	e := newEnv(t)
	j, task := e.create(t, closedSpec([]int{1}, []int{10}, 1, testservers.StartTarget(t, "hello benchq", 0)))
	if _, err := e.queue.EnqueueContext(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	told := &flakyNotices{}
	w := worker.New(e.rdb, e.st, worker.Config{Logger: e.log, ShutdownTimeout: 2 * time.Second, Notifier: told})
	worker.RunInTest(t, w)

	deadline := time.Now().Add(15 * time.Second)
	for len(told.got()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("notices %v after 15 s, want job.started then job.succeeded (after a retry)", told.got())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := strings.Join(told.got(), ","); got != job.EventStarted+","+job.EventSucceeded {
		t.Errorf("notices %s, want job.started,job.succeeded", got)
	}
	got, err := e.st.GetJob(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusSucceeded {
		t.Errorf("job is %s (%q), want succeeded: a lost notice must not change the outcome", got.Status, got.Error)
	}
}
