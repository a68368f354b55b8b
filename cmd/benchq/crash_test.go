package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/redistest"
)

// The crash test's sweep: one point at concurrency 2 repeated crashRuns
// times against a target that answers after crashDelay, so each run lasts
// about crashRequests/2 × crashDelay ≈ 0.42 s whatever the machine's speed.
const (
	crashRuns     = 10
	crashRequests = 400
	crashDelay    = 2 * time.Millisecond
	// crashKillAfter is how many runs are stored when the worker is killed.
	crashKillAfter = 3
	// crashRecoveryLimit bounds the wait for the job after the kill. asynq
	// 0.26 gives a killed worker's task back only once its lease (30 s,
	// renewed every 5 s by the heartbeat) ended more than 30 s ago, as
	// seen by a recoverer that runs when a server starts and then once a
	// minute (all hard-coded): about 61 s after the kill with the new
	// worker started at once. The worker resumes that first lease expiry
	// after handBackDelay (1 s), then runs the remaining ~7 runs (~3 s):
	// measured about 66 s; the limit leaves room for a loaded machine.
	crashRecoveryLimit = 100 * time.Second
)

// crashRun is what the crash test reads of a stored run.
type crashRun struct {
	Point      int       `json:"point"`
	Repeat     int       `json:"repeat"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Result     struct {
		CompleteRequests int `json:"complete_requests"`
		FailedRequests   int `json:"failed_requests"`
	} `json:"result"`
}

// TestWorkerCrashResumesSweep kills the only worker with SIGKILL in the
// middle of a 10-run sweep and starts a new one: the job must succeed with
// every repeat stored exactly once, the runs stored before the crash kept
// as they were, and no stored run measured again.
func TestWorkerCrashResumesSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test waits for asynq's lease recovery (76-110 s); skipped with -short")
	}
	rs := redistest.Start(t)
	bin := buildBenchq(t)
	// serve and worker refuse loopback targets unless the operator allows them.
	env := append(os.Environ(), "BENCHQ_REDIS_URL="+rs.URL(), "BENCHQ_SHUTDOWN_TIMEOUT=10s", "BENCHQ_ALLOW_TARGETS=127.0.0.0/8")
	api := startProcess(t, bin, env, "serve", "--addr", "127.0.0.1:0")
	base := keyedBase(t, rs.URL(), api.waitAddr(t)) // serve needs a key
	first := startProcess(t, bin, env, "worker")
	tg := startSlowTarget(t, crashDelay)

	j := submit(t, base, map[string]any{
		"name":    "crash",
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep": map[string]any{"concurrency": []int{2}, "requests": []int{crashRequests},
			"repeats": crashRuns, "order": "sequential"},
	})
	waitRuns(t, base, j.ID, crashKillAfter, 30*time.Second)
	// Let the next run get under way, so the kill also loses a run in flight.
	time.Sleep(150 * time.Millisecond)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill worker: %v", err)
	}
	<-first.done
	killed := time.Now()
	before := runsOf(t, base, j.ID)
	hitsAtKill := tg.hits.Load()
	if len(before) < crashKillAfter || len(before) >= crashRuns {
		t.Fatalf("%d runs stored at the kill, want %d to %d: the kill must land mid-sweep", len(before), crashKillAfter, crashRuns-1)
	}
	t.Logf("killed the worker with %d runs stored and %d requests served", len(before), hitsAtKill)

	second := startProcess(t, bin, env, "worker")
	got := waitJob(t, base, j.ID, crashRecoveryLimit)
	t.Logf("job %s after the kill in %s", got.Status, time.Since(killed).Round(100*time.Millisecond))
	if got.Status != "succeeded" || got.Progress.RunsDone != crashRuns || got.Progress.RunsTotal != crashRuns {
		t.Fatalf("job = %s (%s) with %d/%d runs, want succeeded with %d/%d",
			got.Status, got.Error, got.Progress.RunsDone, got.Progress.RunsTotal, crashRuns, crashRuns)
	}
	checkCrashRuns(t, before, runsOf(t, base, j.ID), killed)
	// Every run sends crashRequests; the run lost in the kill sent fewer.
	// More than one extra run's worth means a stored run was measured again.
	if hits, lo, hi := tg.hits.Load(), int64(crashRuns*crashRequests), int64((crashRuns+1)*crashRequests); hits < lo || hits > hi {
		t.Errorf("target served %d requests, want %d to %d (10 runs, plus at most the run lost in the kill)", hits, lo, hi)
	}
	second.stop(t)
	api.stop(t)
}

// checkCrashRuns asserts that after is the whole sweep, each repeat once
// and complete, that the runs in before are unchanged, and that every other
// run started after the kill.
func checkCrashRuns(t *testing.T, before, after []crashRun, killed time.Time) {
	t.Helper()
	if len(after) != crashRuns {
		t.Errorf("results have %d runs, want %d", len(after), crashRuns)
	}
	kept := map[int]crashRun{}
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
func runsOf(t *testing.T, base, id string) []crashRun {
	t.Helper()
	resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+id+"/results", nil)
	var r struct {
		Runs []crashRun `json:"runs"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &r) != nil {
		t.Fatalf("GET /v1/jobs/%s/results = %d %s", id, resp.StatusCode, b)
	}
	sort.Slice(r.Runs, func(i, j int) bool { return r.Runs[i].Repeat < r.Runs[j].Repeat })
	return r.Runs
}

// startSlowTarget is a loopback fasthttp server that counts requests and
// answers each after delay, so a run's length does not depend on how fast
// the machine is.
func startSlowTarget(t *testing.T, delay time.Duration) *target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg := &target{URL: "http://" + ln.Addr().String() + "/"}
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		tg.hits.Add(1)
		time.Sleep(delay)
		ctx.SetBodyString("ok")
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return tg
}
