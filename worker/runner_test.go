package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// TestSweepSucceeds runs 2 targets × concurrency [1,4] × 200 requests × 2
// repeats through the queue and a Worker.
func TestSweepSucceeds(t *testing.T) {
	e := newEnv(t)
	a, b := testservers.StartTarget(t, "hello benchq", 0), testservers.StartTarget(t, "hello benchq", 0)
	spec := closedSpec([]int{1, 4}, []int{200}, 2, a, b)
	spec.Thresholds = job.Thresholds("complete == 200", "b: failed_ratio <= 0")
	j, task := e.create(t, spec)
	e.enqueue(t, task)
	e.startWorker(t)

	got := e.waitJob(t, j.ID, 30*time.Second, "a terminal status", terminal)
	if got.Status != job.StatusSucceeded || got.Error != "" {
		t.Fatalf("job status = %s (error %q), want succeeded", got.Status, got.Error)
	}
	if got.Verdict != job.VerdictPass {
		t.Errorf("job verdict = %q, want pass (every run completed its 200 requests)", got.Verdict)
	}
	if got.Progress.RunsDone != 8 || got.Progress.RunsTotal != 8 || got.Progress.CurrentRun != nil {
		t.Errorf("final progress = %+v, want 8 of 8 runs done, no current run", got.Progress)
	}
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 {
		t.Fatalf("len(Runs) = %d, want 8", len(runs))
	}
	points := got.Spec.Points()
	for _, r := range runs {
		p := points[r.Point]
		if r.Result.CompleteRequests != 200 || r.Result.FailedRequests != 0 {
			t.Errorf("run %v: complete_requests = %d, failed %d; want 200, 0", r.RunKey, r.Result.CompleteRequests, r.Result.FailedRequests)
		}
		if r.Result.ConcurrencyLevel != p.Concurrency || r.Concurrency != p.Concurrency || r.Target != p.Target {
			t.Errorf("run %v: concurrency_level = %d on %q, want %d on %q", r.RunKey, r.Result.ConcurrencyLevel, r.Target, p.Concurrency, p.Target)
		}
		// The stored measurement is the one the result was built from.
		m, err := r.DecodeMeasurement()
		if err != nil {
			t.Errorf("run %v: stored measurement: %v", r.RunKey, err)
			continue
		}
		if m.Complete != 200 || m.Connect.Count != 200 || m.Waiting.Count != 200 || m.Processing.Count != 200 || m.Total.Count != 200 {
			t.Errorf("run %v: stored measurement has %d complete, phase counts %d/%d/%d/%d; want 200 each",
				r.RunKey, m.Complete, m.Connect.Count, m.Processing.Count, m.Waiting.Count, m.Total.Count)
		}
		if diff := cmp.Diff(r.Result, abreport.FromMeasurement(m, abreport.Options{})); diff != "" {
			t.Errorf("run %v: result differs from the one its stored measurement gives (-stored +rebuilt):\n%s", r.RunKey, diff)
		}
	}
	for name, tg := range map[string]*testservers.Target{"a": a, "b": b} {
		if n := tg.Hits(); n != 4*200 {
			t.Errorf("target %s received %d requests, want %d (4 runs of 200, no warm-up)", name, n, 4*200)
		}
	}
	assertEventsEnd(t, e.st, j.ID, job.StatusSucceeded, 8)
}

// TestFailedThresholdSetsVerdict: a threshold no run can meet makes the
// verdict fail, on the job and in its job.finished event.
func TestFailedThresholdSetsVerdict(t *testing.T) {
	e := newEnv(t)
	spec := closedSpec([]int{1}, []int{20}, 1, testservers.StartTarget(t, "hello benchq", 0))
	spec.Thresholds = job.Thresholds("complete == 20", "a: complete > 20")
	j, task := e.create(t, spec)
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	if err := r.HandleJobRun(t.Context(), task); err != nil {
		t.Fatalf("HandleJobRun = %v, want nil", err)
	}
	got, err := e.st.GetJob(t.Context(), j.ID)
	if err != nil || got.Status != job.StatusSucceeded || got.Verdict != job.VerdictFail {
		t.Fatalf("job = %+v, %v; want succeeded with verdict fail", got, err)
	}
	events, err := e.st.ReadEvents(t.Context(), j.ID, "0", 0)
	if err != nil || len(events) == 0 || !strings.Contains(string(events[len(events)-1].Data), `"verdict":"fail"`) {
		t.Errorf("last event = %v, %v; want job.finished with verdict fail", events, err)
	}
}

// assertEventsEnd checks the stream: job.started first, a run.finished per
// run, job.finished last with the status.
func assertEventsEnd(t *testing.T, st *store.Store, id string, status job.Status, runs int) {
	t.Helper()
	// The job's status is stored before its job.finished event is
	// appended: a reader that saw the status may be a moment early.
	var events []store.Event
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		events, err = st.ReadEvents(t.Context(), id, "0", 0)
		if err != nil || (len(events) > 0 && events[len(events)-1].Type == job.EventFinished) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(events) < 2 {
		t.Fatalf("ReadEvents = %d events, %v; want at least 2", len(events), err)
	}
	counts := map[string]int{}
	for _, ev := range events {
		counts[ev.Type]++
	}
	first, last := events[0], events[len(events)-1]
	if first.Type != job.EventStarted || last.Type != job.EventFinished || counts[job.EventRunFinished] != runs {
		t.Errorf("events: first %s, last %s, %d run.finished; want job.started, job.finished, %d", first.Type, last.Type, counts[job.EventRunFinished], runs)
	}
	if want := `"status":"` + string(status) + `"`; !strings.Contains(string(last.Data), want) {
		t.Errorf("job.finished data = %s, want it to hold %s", last.Data, want)
	}
}

// TestRetryAfterCrashStoresEachRunOnce stops an attempt after 4 of 10 runs
// are stored, leaves the job running as a killed worker would, and runs the
// handler again as asynq's retry would: exactly 10 runs, none twice.
func TestRetryAfterCrashStoresEachRunOnce(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", time.Millisecond)
	j, task := e.create(t, closedSpec([]int{1}, []int{50}, 10, tg))
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})

	ctx, cancel := context.WithCancel(t.Context())
	go func() { // the "crash": the attempt's context ends mid-sweep
		defer cancel()
		for ctx.Err() == nil {
			if keys, err := e.st.RunKeys(ctx, j.ID); err == nil && len(keys) >= 4 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	err := r.HandleJobRun(ctx, task)
	if !errors.Is(err, worker.ErrHandedBack) {
		t.Fatalf("interrupted HandleJobRun = %v, want ErrHandedBack", err)
	}
	mid, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(mid) < 4 || len(mid) >= 10 {
		t.Fatalf("runs after the interrupted attempt = %d, %v; want 4 to 9", len(mid), err)
	}
	// A worker killed with -9 never hands back: force the job to running.
	if _, err := e.st.UpdateJob(t.Context(), j.ID, func(j *job.Job) error { return j.Transition(job.StatusRunning, time.Now()) }); err != nil {
		t.Fatal(err)
	}
	if err := r.HandleJobRun(t.Context(), task); err != nil {
		t.Fatalf("retried HandleJobRun = %v, want nil", err)
	}
	got, _ := e.st.GetJob(t.Context(), j.ID)
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || got.Status != job.StatusSucceeded {
		t.Fatalf("after retry: status %s, runs err %v; want succeeded", got.Status, err)
	}
	if len(runs) != 10 {
		t.Fatalf("runs after retry = %d, want exactly 10", len(runs))
	}
	for i, run := range runs {
		if run.Point != 0 || run.Repeat != i || run.Result.CompleteRequests != 50 || run.Result.Canceled {
			t.Errorf("run %d = %v complete %d canceled %v, want {0 %d} complete 50, not canceled", i, run.RunKey, run.Result.CompleteRequests, run.Result.Canceled, i)
		}
	}
	if got.Progress.RunsDone != 10 {
		t.Errorf("RunsDone after retry = %d, want 10", got.Progress.RunsDone)
	}
}

// TestHandlerSkipsFinishedAndMissingJobs covers the early exits.
func TestHandlerSkipsFinishedAndMissingJobs(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 0)
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	j, task := e.create(t, closedSpec([]int{1}, []int{10}, 1, tg))
	if _, err := e.requestCancel(t.Context(), j.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.HandleJobRun(t.Context(), task); err != nil {
		t.Errorf("HandleJobRun(canceled job) = %v, want nil", err)
	}
	missing := asynq.NewTask("job:run", []byte(`{"job_id":"01J00000000000000000000000"}`))
	if err := r.HandleJobRun(t.Context(), missing); !errors.Is(err, asynq.SkipRetry) || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("HandleJobRun(missing job) = %v, want SkipRetry and store.ErrNotFound", err)
	}
	bad := asynq.NewTask("job:run", []byte(`{`))
	if err := r.HandleJobRun(t.Context(), bad); !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("HandleJobRun(bad payload) = %v, want SkipRetry", err)
	}
	if n := tg.Hits(); n != 0 {
		t.Errorf("target received %d requests, want 0", n)
	}
}

// TestRefusedTargetFailsJob: a target nobody listens on could not be
// benchmarked at all, so the job fails and names it.
func TestRefusedTargetFailsJob(t *testing.T) {
	e := newEnv(t)
	ok := testservers.StartTarget(t, "hello benchq", 0)
	dead := &testservers.Target{URL: "http://" + closedAddr(t) + "/"}
	j, task := e.create(t, closedSpec([]int{1}, []int{20}, 2, ok, dead))
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	if err := r.HandleJobRun(t.Context(), task); err != nil {
		t.Fatalf("HandleJobRun = %v, want nil (the job ran; its target refused)", err)
	}
	got, _ := e.st.GetJob(t.Context(), j.ID)
	if got.Status != job.StatusFailed || !strings.Contains(got.Error, `target "b"`) {
		t.Errorf("job = %s, error %q; want failed naming target \"b\"", got.Status, got.Error)
	}
	runs, _ := e.st.Runs(t.Context(), j.ID)
	if len(runs) != 4 {
		t.Errorf("runs = %d, want 4 (refused runs are results too)", len(runs))
	}
}
