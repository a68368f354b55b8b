package worker_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// spanSpec loads tg for a second at concurrency 2, its requests marked
// with load so the target tells the jobs apart.
func spanSpec(tg *testservers.SpanTarget, load string, exclusive bool) job.Spec {
	return job.Spec{
		Name:      load,
		Targets:   []job.Target{{Name: "t", URL: tg.URL}},
		Request:   job.Request{Headers: map[string]string{testservers.SpanHeader: load}},
		Sweep:     job.Sweep{Concurrency: []int{2}, Duration: []job.Duration{job.Duration(time.Second)}},
		Exclusive: &exclusive,
	}
}

// TestExclusiveJobsTakeTurns submits two jobs on one target host together
// to a worker running two jobs at once. When either is exclusive (the
// default), the second waits queued, saying for which host and job, and
// starts after the first ended: neither the target nor the runs' times
// see them overlap. When both opted out, both load the target at once.
func TestExclusiveJobsTakeTurns(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		aExclusive, bExclusive bool
	}{
		{"both exclusive", true, true},
		{"one exclusive", true, false},
		{"neither exclusive", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tg := testservers.StartSpanTarget(t, time.Millisecond)
			a, ta := e.create(t, spanSpec(tg, "a", tt.aExclusive))
			b, tb := e.create(t, spanSpec(tg, "b", tt.bExclusive))
			e.enqueue(t, ta)
			e.enqueue(t, tb)
			e.startWorkerWith(t, worker.Config{Concurrency: 2})
			exclusive := tt.aExclusive || tt.bExclusive

			host := strings.TrimPrefix(strings.TrimSuffix(tg.URL, "/"), "http://")
			var waited string
			if exclusive {
				// Whichever a worker took first runs; the other waits and says why.
				e.waitJob(t, b.ID, 10*time.Second, "one job waiting with its reason", func(*job.Job) bool {
					for _, id := range []string{a.ID, b.ID} {
						j, err := e.st.GetJob(t.Context(), id)
						if err == nil && j.Status == job.StatusQueued && j.QueuedReason != "" {
							waited = j.QueuedReason
							return true
						}
					}
					return false
				})
				if !strings.Contains(waited, "waiting for target "+host+", held by job ") {
					t.Errorf("queued_reason = %q, want it to name target %s and the job holding it", waited, host)
				}
			}
			ja := e.waitJob(t, a.ID, 30*time.Second, "a terminal status", terminal)
			jb := e.waitJob(t, b.ID, 30*time.Second, "a terminal status", terminal)
			for _, j := range []*job.Job{ja, jb} {
				if j.Status != job.StatusSucceeded || j.QueuedReason != "" {
					t.Fatalf("job %s ended %s (%s), queued_reason %q; want succeeded, no reason", j.Spec.Name, j.Status, j.Error, j.QueuedReason)
				}
			}
			ra, rb := onlyRun(t, e.st, a.ID), onlyRun(t, e.st, b.ID)
			sa, sb := tg.Span("a"), tg.Span("b")
			t.Logf("target saw a %s .. %s (%d requests), b %s .. %s (%d requests)",
				sa.First.Format(time.StampMicro), sa.Last.Format(time.StampMicro), sa.Requests,
				sb.First.Format(time.StampMicro), sb.Last.Format(time.StampMicro), sb.Requests)
			t.Logf("runs: a %s .. %s, b %s .. %s", ra.StartedAt.Format(time.StampMicro), ra.FinishedAt.Format(time.StampMicro),
				rb.StartedAt.Format(time.StampMicro), rb.FinishedAt.Format(time.StampMicro))
			runsOverlap := ra.StartedAt.Before(rb.FinishedAt) && rb.StartedAt.Before(ra.FinishedAt)
			if got := sa.Overlaps(sb); got != !exclusive || runsOverlap != !exclusive {
				t.Errorf("target saw overlap %v, runs overlap %v; want %v", got, runsOverlap, !exclusive)
			}
			if exclusive {
				first, second := ja, jb
				if jb.StartedAt.Before(*ja.StartedAt) {
					first, second = jb, ja
				}
				if second.StartedAt.Before(*first.FinishedAt) {
					t.Errorf("job %s started at %s, before job %s finished at %s", second.Spec.Name, second.StartedAt, first.Spec.Name, first.FinishedAt)
				}
			}
		})
	}
}

func onlyRun(t *testing.T, st *store.Store, id string) job.Run {
	t.Helper()
	runs, err := st.Runs(t.Context(), id)
	if err != nil || len(runs) != 1 {
		t.Fatalf("Runs(%s) = %d runs, %v; want 1", id, len(runs), err)
	}
	return runs[0]
}

// TestTargetOfDeadJobComesFree: a host held by a job whose worker died
// (a lease nobody renews) is free once that lease runs out; the job
// waiting for it meanwhile is queued with the reason, then runs, and its
// waits used none of its task's retries.
func TestTargetOfDeadJobComesFree(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 0)
	spec := closedSpec([]int{1}, []int{20}, 1, tg)
	hosts := spec.WithDefaults().TargetHosts()
	const ghostLease = 3 * time.Second
	busy, err := e.st.AcquireTargets(t.Context(), "dead-job", hosts, ghostLease, store.TargetWait{Order: time.Now(), Stale: time.Minute})
	if err != nil || busy != nil {
		t.Fatalf("AcquireTargets(dead-job) = %+v, %v", busy, err)
	}
	freeAt := time.Now().Add(ghostLease)
	j, task := e.create(t, spec)
	e.enqueue(t, task)
	e.startWorkerWith(t, worker.Config{JobLease: time.Second})

	waiting := e.waitJob(t, j.ID, 5*time.Second, "queued with a reason", func(j *job.Job) bool { return j.QueuedReason != "" })
	if want := "waiting for target " + hosts[0] + ", held by another job"; waiting.Status != job.StatusQueued || waiting.QueuedReason != want {
		t.Errorf("waiting job = %s, queued_reason %q; want queued, %q", waiting.Status, waiting.QueuedReason, want)
	}
	got := e.waitJob(t, j.ID, 15*time.Second, "a terminal status", terminal)
	if got.Status != job.StatusSucceeded || tg.Hits() != 20 {
		t.Fatalf("job ended %s (%s) with %d requests on the target; want succeeded, 20", got.Status, got.Error, tg.Hits())
	}
	// Redis and this process share the clock; 100 ms covers the rounding
	// of Redis's expiry.
	if got.StartedAt.Before(freeAt.Add(-100 * time.Millisecond)) {
		t.Errorf("job started at %s, before the dead job's lease ran out at %s", got.StartedAt, freeAt)
	}
	info, err := asynq.NewInspectorFromRedisClient(e.rdb).GetTaskInfo(queue.QueueJobs, j.ID) // a job's own task has its ID
	if err != nil {
		t.Fatal(err)
	}
	if info.Retried != 0 {
		t.Errorf("task retried %d times after waiting for its target, want 0 counted", info.Retried)
	}
}

// TestResumedJobWaitsQueuedForItsTarget: a job whose worker died running
// it lost its host when its leases ran out, and another job took the
// host. The attempt resuming it must not load the host meanwhile: the job
// goes back to queued, the crash counted, with the reason; once the other
// job ends, the next attempt runs it.
func TestResumedJobWaitsQueuedForItsTarget(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	tg := testservers.StartTarget(t, "hello benchq", 0)
	j, task := e.create(t, closedSpec([]int{1}, []int{20}, 1, tg))
	hosts := j.Spec.TargetHosts()
	if _, err := e.st.UpdateJob(ctx, j.ID, func(j *job.Job) error {
		_, err := j.Start("dead-worker/1", j.ID, job.CrashBudget{}, time.Now().UTC())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if busy, err := e.st.AcquireTargets(ctx, "other-job", hosts, time.Minute, store.TargetWait{Order: time.Now(), Stale: time.Minute}); err != nil || busy != nil {
		t.Fatalf("AcquireTargets(other-job) = %+v, %v", busy, err)
	}
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	err := r.HandleJobRun(ctx, task)
	if err == nil || errors.Is(err, asynq.SkipRetry) || errors.Is(err, worker.ErrHandedBack) {
		t.Fatalf("HandleJobRun while the host is another job's = %v, want an error asynq retries", err)
	}
	got, err := e.st.GetJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := "waiting for target " + hosts[0] + ", held by another job" // not a job of the store
	if got.Status != job.StatusQueued || got.Crashes != 1 || got.QueuedReason != want || tg.Hits() != 0 {
		t.Fatalf("job = %s, crashes %d, queued_reason %q, %d requests sent; want queued, 1, %q, none",
			got.Status, got.Crashes, got.QueuedReason, tg.Hits(), want)
	}
	if err := e.st.ReleaseTargets(ctx, "other-job", hosts); err != nil {
		t.Fatal(err)
	}
	if err := r.HandleJobRun(ctx, task); err != nil {
		t.Fatalf("HandleJobRun once the host is free = %v", err)
	}
	got, err = e.st.GetJob(ctx, j.ID)
	if err != nil || got.Status != job.StatusSucceeded || tg.Hits() != 20 {
		t.Fatalf("job = %+v, %v with %d requests; want succeeded after 20", got, err, tg.Hits())
	}
	if holder, shared, err := e.st.TargetHolders(ctx, hosts[0]); err != nil || holder != "" || len(shared) != 0 {
		t.Errorf("after the job ended its host is held by %q and %q (%v), want free", holder, shared, err)
	}
}

// TestCanceledWaiterLeavesTheQueue: a job canceled while it waits for a
// host gives up its place at once, so a later job gets the host as soon
// as it comes free, not after the canceled one's place went stale.
func TestCanceledWaiterLeavesTheQueue(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	tg := testservers.StartTarget(t, "hello benchq", 0)
	spec := closedSpec([]int{1}, []int{20}, 1, tg)
	hosts := spec.WithDefaults().TargetHosts()
	if busy, err := e.st.AcquireTargets(ctx, "holder", hosts, time.Minute, store.TargetWait{Order: time.Now(), Stale: time.Minute}); err != nil || busy != nil {
		t.Fatalf("AcquireTargets(holder) = %+v, %v", busy, err)
	}
	e.startWorkerWith(t, worker.Config{})
	early, task := e.create(t, spec)
	e.enqueue(t, task)
	e.waitJob(t, early.ID, 5*time.Second, "queued with a reason", func(j *job.Job) bool { return j.QueuedReason != "" })
	if _, err := e.requestCancel(ctx, early.ID); err != nil {
		t.Fatalf("cancel the waiting job: %v", err)
	}
	late, task := e.create(t, spec)
	e.enqueue(t, task)
	e.waitJob(t, late.ID, 5*time.Second, "queued with a reason", func(j *job.Job) bool { return j.QueuedReason != "" })
	if err := e.st.ReleaseTargets(ctx, "holder", hosts); err != nil {
		t.Fatal(err)
	}
	// A place left behind would hold the host for the staleness bound,
	// three job leases (30 s).
	got := e.waitJob(t, late.ID, 10*time.Second, "a terminal status", terminal)
	if got.Status != job.StatusSucceeded {
		t.Fatalf("later job ended %s (%s), want succeeded", got.Status, got.Error)
	}
	if j, err := e.st.GetJob(ctx, early.ID); err != nil || j.Status != job.StatusCanceled {
		t.Errorf("canceled waiter = %+v, %v; want canceled", j, err)
	}
}

// TestQueuedReasonNamesOnlyOwnJobs: a job waiting for a host another job
// holds says which host, and names the job in the way only when it is
// its owner's own: another tenant's job ids are not its owner's to see.
func TestQueuedReasonNamesOnlyOwnJobs(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	spec := closedSpec([]int{1}, []int{20}, 1, testservers.StartTarget(t, "hello benchq", 0))
	hosts := spec.WithDefaults().TargetHosts()
	holder, _ := e.createAs(t, "key-a", spec)
	if busy, err := e.st.AcquireTargets(ctx, holder.ID, hosts, time.Minute, store.TargetWait{Order: holder.CreatedAt, Stale: time.Minute}); err != nil || busy != nil {
		t.Fatalf("AcquireTargets(holder) = %+v, %v", busy, err)
	}
	tests := []struct {
		owner string
		want  string
	}{
		{"key-a", "waiting for target " + hosts[0] + ", held by job " + holder.ID},
		{"key-b", "waiting for target " + hosts[0] + ", held by another job"},
	}
	r := worker.NewRunner(e.st, worker.Config{Logger: e.log})
	for _, tt := range tests {
		t.Run(tt.owner, func(t *testing.T) {
			j, task := e.createAs(t, tt.owner, spec)
			if err := r.HandleJobRun(ctx, task); err == nil {
				t.Fatal("HandleJobRun while the host is held = nil, want an error asynq retries")
			}
			got, err := e.st.GetJob(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != job.StatusQueued || got.QueuedReason != tt.want {
				t.Errorf("job of %s: %s, queued_reason %q; want queued, %q", tt.owner, got.Status, got.QueuedReason, tt.want)
			}
		})
	}
}
