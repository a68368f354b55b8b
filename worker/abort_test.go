package worker_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// reachedAt polls tg's request count and returns when it first reached n
// (to the millisecond), read once the test's load is over.
func reachedAt(t *testing.T, tg *testservers.Target, n int64) func() time.Time {
	t.Helper()
	var at atomic.Int64
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if tg.Hits() >= n {
					at.Store(time.Now().UnixNano())
					return
				}
			}
		}
	}()
	return func() time.Time { return time.Unix(0, at.Load()) }
}

// A target failing half its requests under "failed_ratio < 0.01" with
// abort: the run ends within a second of the minimum requests, far short
// of its count, and is stored aborted with the reason; the job succeeds
// with the threshold failed.
func TestAbortEndsFailingRun(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartFailing(t, "hello benchq", 2)
	const requests, after = 200000, 200
	spec := closedSpec([]int{4}, []int{requests}, 1, tg)
	spec.Thresholds = []job.ThresholdEntry{{Threshold: "failed_ratio < 0.01", Abort: job.AbortRun, AbortAfter: after}}
	j, task := e.create(t, spec)
	minReached := reachedAt(t, tg, after)
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	if err := r.HandleJobRun(t.Context(), task); err != nil {
		t.Fatalf("HandleJobRun = %v, want nil", err)
	}
	got, err := e.st.GetJob(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != job.StatusSucceeded || got.Verdict != job.VerdictFail {
		t.Fatalf("job = %s, verdict %q (error %q); want succeeded with verdict fail", got.Status, got.Verdict, got.Error)
	}
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("Runs = %d, %v; want 1", len(runs), err)
	}
	run := runs[0]
	attempted := run.Result.CompleteRequests + run.Result.FailedRequests
	late := run.FinishedAt.Sub(minReached())
	t.Logf("aborted after %d requests (%d hits), %v after the %dth request reached the target; reason %q",
		attempted, tg.Hits(), late, after, run.AbortReason)
	if !run.Aborted || run.AbortedBy != "failed_ratio < 0.01" || !strings.Contains(run.AbortReason, "failed_ratio 0.") {
		t.Errorf("run aborted=%v by %q (%q); want aborted by failed_ratio < 0.01 with the ratio", run.Aborted, run.AbortedBy, run.AbortReason)
	}
	if attempted < after || attempted >= requests/2 {
		t.Errorf("run attempted %d requests, want at least %d and far fewer than %d", attempted, after, requests)
	}
	// Generous: the engine judges every 20 ms; a busy CI machine may lag.
	if late > time.Second {
		t.Errorf("run finished %v after the minimum requests, want within 1s", late)
	}
	if fs := got.Analysis.Verdict.Failures; len(fs) != 1 || !strings.Contains(fs[0].Reason, "aborted repeat 0") {
		t.Errorf("verdict failures = %+v, want failed_ratio failing with the abort", fs)
	}
}

// A threshold a healthy target keeps never aborts: ten runs of it all go
// to their end and pass.
func TestAbortSparesHealthyRuns(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 0)
	spec := closedSpec([]int{4}, []int{2000}, 10, tg)
	spec.Thresholds = []job.ThresholdEntry{
		{Threshold: "failed_ratio < 0.01", Abort: job.AbortJob, AbortAfter: 1},
		{Threshold: "non_2xx_ratio <= 0", Abort: job.AbortRun},
	}
	j, task := e.create(t, spec)
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	if err := r.HandleJobRun(t.Context(), task); err != nil {
		t.Fatalf("HandleJobRun = %v, want nil", err)
	}
	got, err := e.st.GetJob(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 10 {
		t.Fatalf("Runs = %d, %v; want 10", len(runs), err)
	}
	if got.Status != job.StatusSucceeded || got.Verdict != job.VerdictPass {
		t.Errorf("job = %s, verdict %q (error %q), failures %+v; want succeeded with verdict pass", got.Status, got.Verdict, got.Error, got.Analysis.Verdict.Failures)
	}
	for _, run := range runs {
		if run.Aborted || run.Result.CompleteRequests != 2000 {
			t.Errorf("run %v: aborted %v (%q), %d complete; want 2000, not aborted", run.RunKey, run.Aborted, run.AbortReason, run.Result.CompleteRequests)
		}
	}
}

// "abort": "job" ends the job at the first run that breaks it: failed,
// with the reason, and no other run is started.
func TestAbortEndsJob(t *testing.T) {
	e := newEnv(t)
	bad, good := testservers.StartFailing(t, "hello benchq", 2), testservers.StartTarget(t, "hello benchq", 0)
	spec := closedSpec([]int{2}, []int{100000}, 3, bad, good)
	spec.Thresholds = []job.ThresholdEntry{{Threshold: "failed_ratio < 0.01", Abort: job.AbortJob}}
	j, task := e.create(t, spec)
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	err := r.HandleJobRun(t.Context(), task)
	if err != nil {
		t.Fatalf("HandleJobRun = %v, want nil", err)
	}
	got, err := e.st.GetJob(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("job error: %s", got.Error)
	if got.Status != job.StatusFailed || !strings.Contains(got.Error, `threshold "failed_ratio < 0.01" aborted the job on target "a"`) {
		t.Errorf("job = %s (error %q), want failed naming the threshold and target a", got.Status, got.Error)
	}
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 1 || !runs[0].Aborted {
		t.Fatalf("Runs = %d (first aborted: %v), %v; want the one aborted run", len(runs), len(runs) > 0 && runs[0].Aborted, err)
	}
	if n := good.Hits(); n != 0 {
		t.Errorf("target b received %d requests, want none after the job was aborted", n)
	}
	assertEventsEnd(t, e.st, j.ID, job.StatusFailed, 1)
}
