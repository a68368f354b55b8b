package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

// The fault suite: real benchq processes, a real redis-server and loopback
// targets, each test one fault an operator meets (the worker crashes are
// in crash_test.go, the shutdown race in the worker package). Every test
// checks what must hold whatever the fault: no run lost or stored twice
// (the target's own request count), job statuses that agree with the
// runs, memory bounded. README's Reliability section tabulates them.

// TestFaultRedisCrashWithAOF kills redis-server with SIGKILL while one job
// runs on each of two workers and a third waits in the queue, and starts
// it again from its append-only file 3 s later: every job must succeed
// with each (point, repeat) stored once and complete, and the target must
// have served every stored request, plus at most one lost run per worker
// that was mid-run when Redis went away.
func TestFaultRedisCrashWithAOF(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test kills redis-server mid-job; skipped with -short")
	}
	rs := redistest.StartPersistent(t)
	se := startServe(t, rs.URL())
	base := se.base
	workers := []*process{startProcess(t, se.bin, se.env, "worker"), startProcess(t, se.bin, se.env, "worker")}
	tg := testservers.StartTarget(t, "ok", crashDelay)

	const repeats = 12 // each run about 0.42 s: a 5 s job
	var ids []string
	for i := range 3 {
		j := submit(t, base, map[string]any{
			"name":    fmt.Sprintf("redis crash %d", i),
			"targets": []map[string]string{{"url": tg.URL}},
			"sweep": map[string]any{"concurrency": []int{2}, "requests": []int{crashRequests},
				"repeats": repeats, "order": "sequential"},
		})
		ids = append(ids, j.ID)
	}
	waitRuns(t, base, ids[0], 3, time.Minute)
	time.Sleep(150 * time.Millisecond) // into the next run
	rs.Kill()
	killed := time.Now()
	time.Sleep(3 * time.Second)
	rs.Restart(t)
	restarted := time.Now()
	t.Logf("redis-server killed and restarted from its AOF %s later", restarted.Sub(killed).Round(10*time.Millisecond))
	resumed := firstAfter(t, tg, restarted, time.Minute)
	t.Logf("load back on the target %s after the restart", resumed.Sub(restarted).Round(10*time.Millisecond))

	stored := 0
	for _, id := range ids {
		got := waitJob(t, base, id, 2*time.Minute)
		runs := runsOf(t, base, id)
		t.Logf("job %s: %s after %s, %d runs", id, got.Status, time.Since(killed).Round(100*time.Millisecond), len(runs))
		if got.Status != "succeeded" || got.Progress.RunsDone != repeats || got.Progress.RunsTotal != repeats {
			t.Errorf("job %s = %s (%s) with %d/%d runs, want succeeded with %d/%d",
				id, got.Status, got.Error, got.Progress.RunsDone, got.Progress.RunsTotal, repeats, repeats)
		}
		seen := map[int]int{}
		for _, r := range runs {
			seen[r.Repeat]++
			if r.Result.CompleteRequests != crashRequests || r.Result.FailedRequests != 0 {
				t.Errorf("job %s repeat %d: complete %d, failed %d; want %d and 0",
					id, r.Repeat, r.Result.CompleteRequests, r.Result.FailedRequests, crashRequests)
			}
		}
		for i := range repeats {
			if seen[i] != 1 {
				t.Errorf("job %s repeat %d stored %d times, want once", id, i, seen[i])
			}
		}
		stored += len(runs)
	}
	lo := int64(stored * crashRequests)
	hi := lo + int64(len(workers)*crashRequests)
	hits := tg.Hits()
	t.Logf("target served %d requests for %d stored runs (%d lost with the crash)", hits, stored, (hits-lo)/crashRequests)
	if hits < lo || hits > hi {
		t.Errorf("target served %d requests, want %d to %d: every stored run, plus at most the run each worker lost", hits, lo, hi)
	}
	for _, w := range workers {
		w.Stop(t)
	}
	se.api.Stop(t)
}

// TestRedisDownLogsNoClientNoise: a worker whose Redis refuses
// connections logs benchq's own warnings, not go-redis's line per failed
// dial (they go to debug).
func TestRedisDownLogsNoClientNoise(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there: every dial is refused
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BENCHQ_") {
			env = append(env, kv)
		}
	}
	w := startProcess(t, buildBenchq(t), append(env, "BENCHQ_REDIS_URL=redis://"+addr+"/0"), "worker")
	time.Sleep(3 * time.Second)
	w.Kill(t)
	lines := 0
	for _, line := range w.Buffered() {
		lines++
		if strings.Contains(line, "pool.go") || strings.HasPrefix(line, "redis: ") {
			t.Errorf("worker logged go-redis's own line at the default level: %q", line)
		}
	}
	if lines == 0 {
		t.Error("worker logged nothing in 3 s with its Redis down")
	}
}

// TestFaultHostileTargets runs one job per misbehaving target on the
// all-in-one binary (its Redis a child process, so the all-in-one's own
// memory is what is measured): 256 MiB bodies, an endless chunked body,
// a garbage status line, resets on accept, a header flood and short
// bodies. Each job must end succeeded with its requests counted in the
// class that names the fault and the verdict saying whether any request
// succeeded, and the all-in-one's peak resident memory must stay under
// 128 MiB throughout.
func TestFaultHostileTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test sends 2 GiB of bodies over loopback; skipped with -short")
	}
	redistest.Binary(t)
	bin := buildBenchq(t)
	dir := t.TempDir()
	a := startAllInOne(t, bin, allInOneEnv(t, dir), dir)
	base := "http://" + a.addr
	tests := []struct {
		b        testservers.Behaviour
		n, c     int
		maxBody  int64
		class    string // the failure class every request lands in; "" for none
		complete int64  // complete_requests
		verdict  string
	}{
		{b: testservers.HugeBody(256 << 20), n: 8, c: 4, complete: 8, verdict: "none"},
		{b: testservers.EndlessChunked(), n: 4, c: 2, maxBody: 64 << 20, class: "body_too_large", verdict: "fail"},
		{b: testservers.GarbageStatus(), n: 20, c: 4, class: "exceptions", verdict: "fail"},
		{b: testservers.ResetOnAccept(), n: 20, c: 4, verdict: "fail"},
		{b: testservers.HeaderFlood(), n: 20, c: 4, class: "header_too_large", verdict: "fail"},
		{b: testservers.ShortBody(1000, 10), n: 20, c: 4, class: "receive", verdict: "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.b.String(), func(t *testing.T) {
			h := testservers.StartHostile(t, tt.b)
			request := map[string]any{"timeout": "10s"}
			if tt.maxBody > 0 {
				request["max_body"] = tt.maxBody
			}
			j := submit(t, base, map[string]any{
				"name":    tt.b.String(),
				"targets": []map[string]any{{"url": h.URL}},
				"request": request,
				"sweep":   map[string]any{"concurrency": []int{tt.c}, "requests": []int{tt.n}},
			})
			got := waitJob(t, base, j.ID, time.Minute)
			if got.Status != "succeeded" || got.Verdict != tt.verdict {
				t.Errorf("job = %s (%s), verdict %q; want succeeded with verdict %q", got.Status, got.Error, got.Verdict, tt.verdict)
			}
			r := hostileRun(t, base, j.ID)
			t.Logf("complete %d, failed %v", r.CompleteRequests, r.Failed)
			if r.CompleteRequests != tt.complete {
				t.Errorf("complete_requests = %d, want %d", r.CompleteRequests, tt.complete)
			}
			if tt.class != "" && r.Failed[tt.class] != int64(tt.n) {
				t.Errorf("failed.%s = %d, want all %d requests (failed: %v)", tt.class, r.Failed[tt.class], tt.n, r.Failed)
			}
			if tt.class == "" && tt.verdict == "fail" && r.FailedRequests < int64(tt.n) {
				t.Errorf("failed_requests = %d, want all %d", r.FailedRequests, tt.n)
			}
		})
	}
	hwm := peakRSS(t, a.Pid())
	t.Logf("all-in-one peak RSS after every hostile job: %d MiB", hwm>>20)
	if hwm > 128<<20 {
		t.Errorf("all-in-one peak RSS = %d MiB, want under 128 MiB whatever the targets sent", hwm>>20)
	}
}

// hostileResult is what the hostile-target test reads of a job's one run.
type hostileResult struct {
	CompleteRequests int64            `json:"complete_requests"`
	FailedRequests   int64            `json:"failed_requests"`
	Failed           map[string]int64 `json:"failed"`
}

func hostileRun(t *testing.T, base, id string) hostileResult {
	t.Helper()
	resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+id+"/results", nil)
	var r struct {
		Runs []struct {
			Result hostileResult `json:"result"`
		} `json:"runs"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &r) != nil || len(r.Runs) != 1 {
		t.Fatalf("GET /v1/jobs/%s/results = %d %s, want one run", id, resp.StatusCode, b)
	}
	return r.Runs[0].Result
}

// peakRSS is the process's peak resident set size (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to read peak memory from: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM", pid)
	return 0
}

// TestFaultWebhookReceiverDown: the job's webhook receiver is not
// listening at all (connection refused) for the first deliveries'
// attempts, then comes up on its address: the event must arrive exactly
// once, and the delivery log must show the refused attempts before it.
func TestFaultWebhookReceiverDown(t *testing.T) {
	rs := redistest.Start(t)
	m := startMain(t, func(c *config.Config) {
		c.RedisURL = rs.URL()
		c.WebhookBackoff = []time.Duration{300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond}
	})
	// Take a free port and give it back: nothing listens there until the
	// receiver starts below.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	tg := testservers.StartTarget(t, "ok", 0)
	j := submit(t, m.URL(), map[string]any{
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{10}},
		"webhook": map[string]any{"url": "http://" + addr + "/hook", "events": []string{"job.succeeded"}},
	})
	if got := waitJob(t, m.URL(), j.ID, 30*time.Second); got.Status != "succeeded" {
		t.Fatalf("job = %s (%s), want succeeded", got.Status, got.Error)
	}
	type attempt struct {
		StatusCode int    `json:"status_code"`
		Outcome    string `json:"outcome"`
	}
	type delivery struct {
		WebhookID string    `json:"webhook_id"`
		Status    string    `json:"status"`
		Attempts  []attempt `json:"attempts"`
	}
	deliveries := func() []delivery {
		resp, b := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+j.ID+"/deliveries", nil)
		var out struct {
			Deliveries []delivery `json:"deliveries"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
			t.Fatalf("GET deliveries = %d %s", resp.StatusCode, b)
		}
		return out.Deliveries
	}
	// Wait for two refused attempts, then bring the receiver up.
	deadline := time.Now().Add(20 * time.Second)
	for ds := deliveries(); len(ds) != 1 || len(ds[0].Attempts) < 2; ds = deliveries() {
		if time.Now().After(deadline) {
			t.Fatalf("deliveries = %+v, want two refused attempts", ds)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var (
		mu  sync.Mutex
		ids []string
	)
	arrived := make(chan struct{}, 10)
	rl, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the receiver's port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ids = append(ids, r.Header.Get("webhook-id"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		arrived <- struct{}{}
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(rl) }()
	t.Cleanup(func() { _ = srv.Close() })
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the webhook did not arrive within 20 s of the receiver coming up")
	}
	var d delivery
	for deadline := time.Now().Add(10 * time.Second); ; {
		ds := deliveries()
		if len(ds) == 1 && ds[0].Status == "delivered" {
			d = ds[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries = %+v, want one delivered", ds)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // a second copy would arrive within a backoff step
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 1 || ids[0] != d.WebhookID {
		t.Errorf("receiver got webhook ids %v, want exactly one, %s", ids, d.WebhookID)
	}
	refused := 0
	for _, a := range d.Attempts[:len(d.Attempts)-1] {
		if a.StatusCode == 0 {
			refused++
		}
	}
	t.Logf("delivered at attempt %d after %d refused attempts: %+v", len(d.Attempts), refused, d.Attempts)
	if refused < 2 || d.Attempts[len(d.Attempts)-1].StatusCode != http.StatusNoContent {
		t.Errorf("attempts = %+v, want at least two refused (no status) before one answered 204", d.Attempts)
	}
}
