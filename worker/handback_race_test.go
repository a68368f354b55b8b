package worker_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/logbuf"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// TestShutdownRaceKeepsStatusWithRunner: a worker stopped with a shutdown
// timeout shorter than its run in flight has its task re-queued by asynq
// while its attempt is still stopping the load, and a second worker takes
// the task at once. Whichever of the two writes first, the job's status
// follows the worker that runs it: running while load reaches the target,
// never queued under load, and the second worker's finish succeeds
// without a retry's wait, as the job's attempt 2. Repeated, since the
// order differs from trial to trial.
func TestShutdownRaceKeepsStatusWithRunner(t *testing.T) {
	const trials = 3
	var raced int
	for i := range trials {
		t.Run("", func(t *testing.T) {
			e := newEnv(t)
			// Slow answers keep 64 requests in flight: the first worker's
			// attempt ends well after asynq re-queued its task.
			tg := testservers.StartTarget(t, "hello benchq", 100*time.Millisecond)
			j, task := e.create(t, closedSpec([]int{64}, []int{640}, 3, tg))
			e.enqueue(t, task)
			stop := e.runWorker(t, worker.Config{ShutdownTimeout: 50 * time.Millisecond})
			e.waitJob(t, j.ID, 20*time.Second, "the second run under way", func(j *job.Job) bool {
				return j.Progress.RunsDone == 1 && j.Progress.RequestsDone > 0
			})
			logs := &logbuf.Buffer{}
			e.log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
			e.runWorker(t, worker.Config{ShutdownTimeout: 10 * time.Second}) // idle until the first lets go
			stopped := time.Now()
			stop()
			var last *job.Job
			for {
				hits := tg.Hits()
				got, err := e.st.GetJob(t.Context(), j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.Status.Terminal() {
					last = got
					break
				}
				time.Sleep(100 * time.Millisecond)
				// Requests arriving before and after the read, a second
				// after the first worker stopped, come from the second.
				if got.Status != job.StatusRunning && tg.Hits() > hits && time.Since(stopped) > time.Second {
					if again, _ := e.st.GetJob(t.Context(), j.ID); again != nil && again.Status == got.Status {
						t.Fatalf("trial %d: job is %s while the second worker's load reaches the target", i, got.Status)
					}
				}
				if time.Since(stopped) > 30*time.Second {
					t.Fatalf("trial %d: job still %s 30 s after the first worker stopped", i, got.Status)
				}
			}
			runs, _ := e.st.Runs(t.Context(), j.ID)
			if last.Status != job.StatusSucceeded || len(runs) != 3 || last.Error != "" {
				t.Fatalf("trial %d: job %s (%q) with %d runs, want succeeded with 3", i, last.Status, last.Error, len(runs))
			}
			if last.Attempt != 2 || last.Crashes != 0 {
				t.Errorf("trial %d: job ended at attempt %d with %d crashes, want attempt 2 (the second worker's), no crash", i, last.Attempt, last.Crashes)
			}
			if out := logs.String(); strings.Contains(out, "level=ERROR") {
				t.Errorf("trial %d: the second worker logged an error:\n%s", i, out)
			} else if strings.Contains(out, "waiting for it to let go") {
				raced++
			}
			t.Logf("trial %d: succeeded %s after the first worker's stop", i, time.Since(stopped).Round(10*time.Millisecond))
		})
	}
	t.Logf("the second worker took the task before the first let go in %d of %d trials", raced, trials)
}
