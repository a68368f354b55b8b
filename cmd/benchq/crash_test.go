package main

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

// The crash test's sweep: one point at concurrency 2 repeated crashRuns
// times against a target that answers after crashDelay, so each run lasts
// about crashRequests/2 × crashDelay ≈ 0.42 s whatever the machine's speed.
const (
	crashRuns     = 24
	crashRequests = 400
	crashDelay    = 2 * time.Millisecond
	// resumeLimit bounds each kill-to-load-resumed wait. With the default
	// 10 s job lease, renewed every 2 s, the dead worker's lease runs out
	// 8-10 s after the kill, and the new worker's janitor, looking every
	// 2 s, has the job resumed at once: about 10-12 s; before job leases
	// it was asynq's task lease and recoverer, 61 s for the first crash
	// and more for each later one.
	resumeLimit = 45 * time.Second
)

// crashKillsAt lists how many runs are stored when the worker running the
// job is killed each time: four kills, each in mid-sweep, one more than
// the crash retries, which count only deaths with no run stored since the
// one before.
var crashKillsAt = []int{3, 9, 15, 19}

// startCrashEnv is the service a crash test kills workers of:
// redis-server and benchq serve, which must stop cleanly at the end.
func startCrashEnv(t *testing.T, extraEnv ...string) *serveEnv {
	t.Helper()
	rs := redistest.Start(t)
	se := startServe(t, rs.URL(), extraEnv...)
	t.Cleanup(func() { se.api.Stop(t) })
	return se
}

// kill ends a worker with SIGKILL and returns when it is gone.
func kill(t *testing.T, p *process) time.Time {
	t.Helper()
	p.Kill(t)
	return time.Now()
}

// TestWorkerCrashesResumeWithinSeconds kills the worker running a 24-run
// sweep with SIGKILL four times, each time starting a new worker at once:
// the load must be back on the target within resumeLimit of every kill,
// not only the first, and the job must succeed with every repeat stored
// exactly once, the runs stored before each kill kept as they were, and
// no stored run measured again: runs were stored between the kills, so
// none of them counts against the crash retries (3).
func TestWorkerCrashesResumeWithinSeconds(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test waits for four job leases to run out (about 55 s); skipped with -short")
	}
	ce := startCrashEnv(t)
	w := startProcess(t, ce.bin, ce.env, "worker")
	tg := testservers.StartTarget(t, "ok", crashDelay)
	j := submit(t, ce.base, map[string]any{
		"name":    "crash",
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep": map[string]any{"concurrency": []int{2}, "requests": []int{crashRequests},
			"repeats": crashRuns, "order": "sequential"},
	})
	type crash struct {
		at     time.Time
		before []job.Run
	}
	var crashes []crash
	for i, n := range crashKillsAt {
		waitRuns(t, ce.base, j.ID, n, resumeLimit+30*time.Second)
		// Let the next run get under way, so the kill also loses a run in flight.
		time.Sleep(150 * time.Millisecond)
		killed := kill(t, w)
		before := runsOf(t, ce.base, j.ID)
		if len(before) < n || len(before) >= crashRuns {
			t.Fatalf("kill %d: %d runs stored, want %d to %d: the kill must land mid-sweep", i+1, len(before), n, crashRuns-1)
		}
		crashes = append(crashes, crash{killed, before})
		w = startProcess(t, ce.bin, ce.env, "worker")
		resumed := firstAfter(t, tg, killed, resumeLimit+15*time.Second)
		took := resumed.Sub(killed)
		t.Logf("kill %d with %d runs stored: load resumed %s after the kill", i+1, len(before), took.Round(10*time.Millisecond))
		if took > resumeLimit {
			t.Errorf("kill %d: load resumed %s after the kill, want under %s", i+1, took.Round(10*time.Millisecond), resumeLimit)
		}
	}
	got := waitJob(t, ce.base, j.ID, time.Minute)
	if got.Status != "succeeded" || got.Progress.RunsDone != crashRuns || got.Progress.RunsTotal != crashRuns {
		t.Fatalf("job = %s (%s) with %d/%d runs, want succeeded with %d/%d",
			got.Status, got.Error, got.Progress.RunsDone, got.Progress.RunsTotal, crashRuns, crashRuns)
	}
	after := runsOf(t, ce.base, j.ID)
	for _, c := range crashes {
		checkCrashRuns(t, c.before, after, c.at)
	}
	// Every run sends crashRequests; each run lost in a kill sent fewer.
	// More than one extra run's worth per kill means a stored run was
	// measured again.
	lo, hi := int64(crashRuns*crashRequests), int64((crashRuns+len(crashKillsAt))*crashRequests)
	if hits := tg.Hits(); hits < lo || hits > hi {
		t.Errorf("target served %d requests, want %d to %d (%d runs, plus at most the run lost in each kill)", hits, lo, hi, crashRuns)
	}
	w.Stop(t)
}

// TestCrashLoopJobFails: a job whose worker dies every time it sends the
// job's load (killed here as soon as the target sees a request, as an
// out-of-memory kill would) is resumed BENCHQ_CRASH_RETRIES times, then
// failed with the reason instead of being run again; the worker that
// failed it goes on to run the next job.
func TestCrashLoopJobFails(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test kills three workers; skipped with -short")
	}
	const retries = 2
	// A short lease keeps the test quick; the bound, not the wait, is tested here.
	ce := startCrashEnv(t, fmt.Sprintf("BENCHQ_CRASH_RETRIES=%d", retries), "BENCHQ_JOB_LEASE=2s")
	w := startProcess(t, ce.bin, ce.env, "worker")
	tg := testservers.StartTarget(t, "ok", crashDelay)
	j := submit(t, ce.base, map[string]any{
		"name":    "crash loop",
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{2}, "requests": []int{crashRequests}, "repeats": 3},
	})
	start := time.Now()
	for i := range retries + 1 {
		firstAfter(t, tg, start, 30*time.Second) // the job's load reached the target
		start = kill(t, w)
		t.Logf("kill %d", i+1)
		w = startProcess(t, ce.bin, ce.env, "worker")
	}
	hits := tg.Hits()
	got := waitJob(t, ce.base, j.ID, 30*time.Second)
	t.Logf("job %s %s after the last kill", got.Status, time.Since(start).Round(10*time.Millisecond))
	if want := fmt.Sprintf("died %d times", retries+1); got.Status != "failed" || !strings.Contains(got.Error, want) {
		t.Fatalf("job = %s (%q), want failed saying the worker %s", got.Status, got.Error, want)
	}
	if n := tg.Hits(); n != hits {
		t.Errorf("target got %d requests after the last kill, want none: a job over its crash retries is not run again", n-hits)
	}
	next := submit(t, ce.base, map[string]any{
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{10}},
	})
	if got := waitJob(t, ce.base, next.ID, 30*time.Second); got.Status != "succeeded" {
		t.Errorf("next job = %s (%q), want succeeded on the worker that failed the crash loop", got.Status, got.Error)
	}
	w.Stop(t)
}

// checkCrashRuns asserts that after is the whole sweep, each repeat once
// and complete, that the runs in before are unchanged, and that every other
// run started after the kill.
func checkCrashRuns(t *testing.T, before, after []job.Run, killed time.Time) {
	t.Helper()
	if len(after) != crashRuns {
		t.Errorf("results have %d runs, want %d", len(after), crashRuns)
	}
	kept := map[int]job.Run{}
	for _, r := range before {
		kept[r.Repeat] = r
	}
	seen := map[int]int{}
	for _, r := range after {
		seen[r.Repeat]++
		if r.Point != 0 || r.Result.CompleteRequests != crashRequests || r.Result.FailedRequests != 0 {
			t.Errorf("run %d/%d: complete %d, failed %d; want point 0, %d complete, 0 failed",
				r.Point, r.Repeat, r.Result.CompleteRequests, r.Result.FailedRequests, crashRequests)
		}
		if old, ok := kept[r.Repeat]; ok {
			if !old.StartedAt.Equal(r.StartedAt) || !old.FinishedAt.Equal(r.FinishedAt) {
				t.Errorf("repeat %d stored before the kill was replaced: started %s, want %s", r.Repeat, r.StartedAt, old.StartedAt)
			}
		} else if !r.StartedAt.After(killed) {
			t.Errorf("repeat %d started at %s, before the kill at %s, but was not stored then", r.Repeat, r.StartedAt, killed)
		}
	}
	for i := range crashRuns {
		if seen[i] != 1 {
			t.Errorf("repeat %d stored %d times, want once", i, seen[i])
		}
	}
}

// waitRuns polls the job's results until at least n runs are stored.
func waitRuns(t *testing.T, base, id string, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for len(runsOf(t, base, id)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("job %s: fewer than %d runs stored after %s", id, n, limit)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// runsOf returns the job's stored runs sorted by repeat.
func runsOf(t *testing.T, base, id string) []job.Run {
	t.Helper()
	runs := results(t, base, id)
	sort.Slice(runs, func(i, j int) bool { return runs[i].Repeat < runs[j].Repeat })
	return runs
}

// firstAfter waits up to limit for a request that arrives after since and
// returns when it arrived, to the poll's 5 ms.
func firstAfter(t *testing.T, tg *testservers.Target, since time.Time, limit time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if last := tg.LastHit(); last.After(since) {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request reached the target within %s after %s", limit, since.Format(time.StampMilli))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
