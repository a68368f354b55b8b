package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestShardedRunOnThreeWorkers runs the production shape, benchq serve and
// three benchq worker processes on a real redis-server, and one point of
// 30000 requests at concurrency 6 split over the three, submitted as a
// job and again through `benchq ab --server --shards`. The merged
// percentiles against every shard's raw samples are checked where the
// samples can be seen, in worker's TestShardedRunMergesExactly.
func TestShardedRunOnThreeWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four benchq processes; skipped with -short")
	}
	ce := startCrashEnv(t)
	workers := []*process{startProcess(t, ce.bin, ce.env, "worker"), startProcess(t, ce.bin, ce.env, "worker"), startProcess(t, ce.bin, ce.env, "worker")}
	tg := testservers.StartTarget(t, "sharded", 0)
	j := submit(t, ce.base, map[string]any{
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{6}, "requests": []int{30000}, "shards": 3},
	})
	if got := waitJob(t, ce.base, j.ID, 2*time.Minute); got.Status != "succeeded" {
		t.Fatalf("job = %s (%s), want succeeded", got.Status, got.Error)
	}
	runs := results(t, ce.base, j.ID)
	if len(runs) != 1 {
		t.Fatalf("%d runs stored, want 1", len(runs))
	}
	jobtest.CheckShardedRun(t, runs[0], 3, 30000, 6)
	if n := tg.Hits(); n != 30000 {
		t.Errorf("target served %d requests, want 30000", n)
	}

	// The same through `benchq ab`: its JSON is the merged run's result.
	u, err := url.Parse(ce.base)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ce.bin, "ab", "--server", "http://"+u.Host, "--shards", "3", "--json", "-n", "3000", "-c", "3", tg.URL)
	cmd.Env = append(ce.env, "BENCHQ_API_KEY="+u.User.Username())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchq ab --server --shards 3: %v\n%s", err, stderr.String())
	}
	var res struct {
		CompleteRequests int64 `json:"complete_requests"`
		ConcurrencyLevel int   `json:"concurrency_level"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.CompleteRequests != 3000 || res.ConcurrencyLevel != 3 {
		t.Errorf("benchq ab --json = %+v (%v), want 3000 requests at concurrency 3\n%s", res, err, stdout.String())
	}
	if got := strings.Count(stderr.String(), "benchq ab: shard "); got != 3 {
		t.Errorf("benchq ab listed %d shards on stderr, want 3:\n%s", got, stderr.String())
	}
	// Without --json: ab's report of the merged run.
	cmd = exec.Command(ce.bin, "ab", "--server", "http://"+u.Host, "--shards", "2", "-n", "1000", "-c", "4", tg.URL)
	cmd.Env = append(ce.env, "BENCHQ_API_KEY="+u.User.Username())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("benchq ab --server --shards 2: %v", err)
	}
	for _, want := range []string{"Benchmarking 127.0.0.1 (be patient).....done", "Concurrency Level:      4", "Complete requests:      1000", "Percentage of the requests served"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("benchq ab --server report lacks %q:\n%s", want, out)
		}
	}
	for _, w := range workers {
		w.Stop(t)
	}
}

// TestShardWorkerKilledRedoesRun kills a worker running a shard of a run
// with SIGKILL: the coordinator sees its lease run out, gives the round up
// and runs the whole run again on three live workers; the run is stored
// once, with none of its shards on the killed worker.
func TestShardWorkerKilledRedoesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a worker and waits for its shard lease; skipped with -short")
	}
	const requests, delay = 6000, 5 * time.Millisecond // each shard: 2000 requests at 2 in flight, about 5 s
	ce := startCrashEnv(t, "BENCHQ_JOB_LEASE=2s")
	workers := []*process{startProcess(t, ce.bin, ce.env, "worker"), startProcess(t, ce.bin, ce.env, "worker"), startProcess(t, ce.bin, ce.env, "worker")}
	tg := testservers.StartTarget(t, "ok", delay)
	j := submit(t, ce.base, map[string]any{
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{6}, "requests": []int{requests}, "shards": 3},
	})
	shard := waitLogLine(t, workers, "worker: shard joining", 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for tg.Hits() < 600 { // the round's load is well under way
		if time.Now().After(deadline) {
			t.Fatalf("target saw %d requests after 30s", tg.Hits())
		}
		time.Sleep(10 * time.Millisecond)
	}
	killedPid := shard.Pid()
	killed := kill(t, shard)
	t.Logf("killed shard worker pid %d with %d requests served", killedPid, tg.Hits())
	workers = append(workers, startProcess(t, ce.bin, ce.env, "worker"))
	got := waitJob(t, ce.base, j.ID, 2*time.Minute)
	if got.Status != "succeeded" {
		t.Fatalf("job = %s (%s), want succeeded after the run was redone", got.Status, got.Error)
	}
	runs := results(t, ce.base, j.ID)
	if len(runs) != 1 {
		t.Fatalf("%d runs stored, want the run once", len(runs))
	}
	jobtest.CheckShardedRun(t, runs[0], 3, requests, 6)
	redone := runs[0].Shards[0].StartedAt
	for _, s := range runs[0].Shards {
		if s.StartedAt.Before(redone) {
			redone = s.StartedAt
		}
	}
	t.Logf("the redone run started %s after the kill, the job succeeded %s after it",
		redone.Sub(killed).Round(10*time.Millisecond), time.Since(killed).Round(100*time.Millisecond))
	if !redone.After(killed) {
		t.Errorf("the stored run started at %s, before the kill at %s: it is the lost round's", redone, killed)
	}
	for _, s := range runs[0].Shards {
		if strings.Contains(s.Worker, fmt.Sprintf(":%d:", killedPid)) {
			t.Errorf("shard stored from the killed worker %s", s.Worker)
		}
	}
	if hits := tg.Hits(); hits <= requests {
		t.Errorf("target served %d requests, want more than %d: the lost round's and the redone run's", hits, requests)
	}
	for _, w := range workers {
		if w != shard {
			w.Stop(t)
		}
	}
}

// waitLogLine returns the first of procs to log a line containing s.
func waitLogLine(t *testing.T, procs []*process, s string, limit time.Duration) *process {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, p := range procs {
			if line, ok := p.TryLine(); ok {
				if strings.Contains(line, s) {
					return p
				}
				continue
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no process logged %q within %s", s, limit)
	return nil
}
