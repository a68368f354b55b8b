package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/proctest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

// The service on the two Redis deployments past one server: a Redis
// Cluster (TestServiceOnCluster) and Sentinel with a failover mid-job
// (TestSentinelFailoverMidJob). Real benchq serve and worker processes,
// real redis-server processes, loopback targets.

// clusterEnv is what every case of TestServiceOnCluster gets: the API of
// a serve process (with a key made by `benchq keys add` on the cluster)
// and three workers, enough for a point split over several, all on one
// 3-master cluster, and a loopback target.
type clusterEnv struct {
	base   string
	target *testservers.Target
}

// clusterCases are what must work on a cluster, each through the API, in
// order on one service. A feature that adds keys to the store adds its
// case here.
var clusterCases = []struct {
	name string
	run  func(t *testing.T, e *clusterEnv)
}{
	{"job with Idempotency-Key", clusterIdempotentJob},
	{"webhook", clusterWebhook},
	{"compare_to", clusterCompareTo},
	{"metrics", clusterMetrics},
	{"cancel and listings", clusterCancelAndList},
	{"sharded point", clusterShardedPoint},
}

// TestServiceOnCluster runs the service on a 3-master Redis Cluster,
// where every transaction and script must stay in one hash slot.
func TestServiceOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster and benchq processes; skipped with -short")
	}
	rc := redistest.StartCluster(t, 3)
	se := startServe(t, rc.URL())
	e := &clusterEnv{base: se.base, target: testservers.StartTarget(t, "ok", 0)}
	var workers []*process
	for range 3 {
		workers = append(workers, startProcess(t, se.bin, se.env, "worker"))
	}
	for _, c := range clusterCases {
		t.Run(c.name, func(t *testing.T) { c.run(t, e) })
	}
	for _, p := range append(workers, se.api) {
		p.Stop(t)
	}
}

// smallSpec is a job of one run of 50 requests on e's target.
func (e *clusterEnv) smallSpec(name string) map[string]any {
	return map[string]any{
		"name":    name,
		"targets": []map[string]string{{"name": "a", "url": e.target.URL}},
		"sweep":   map[string]any{"concurrency": []int{2}, "requests": []int{50}},
	}
}

// postWith POSTs spec as a job with extra headers and returns the status
// and the job answered.
func postWith(t *testing.T, base string, spec any, header map[string]string) (int, apiJob, http.Header) {
	t.Helper()
	body, _ := json.Marshal(spec)
	req := proctest.Request(t, http.MethodPost, base+"/v1/jobs", body)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var j apiJob
	_ = json.Unmarshal(b, &j)
	return resp.StatusCode, j, resp.Header
}

// clusterIdempotentJob: the same Idempotency-Key twice is one job, which
// runs to the end.
func clusterIdempotentJob(t *testing.T, e *clusterEnv) {
	spec := e.smallSpec("idempotent")
	h := map[string]string{"Idempotency-Key": "cluster-1"}
	code, first, _ := postWith(t, e.base, spec, h)
	if code != http.StatusAccepted || first.ID == "" {
		t.Fatalf("first POST = %d %+v, want 202 with a job", code, first)
	}
	code, again, hdr := postWith(t, e.base, spec, h)
	if code != http.StatusOK || again.ID != first.ID || hdr.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay = %d job %s (Idempotent-Replayed %q), want 200 with job %s", code, again.ID, hdr.Get("Idempotent-Replayed"), first.ID)
	}
	if got := waitJob(t, e.base, first.ID, time.Minute); got.Status != "succeeded" {
		t.Fatalf("job %s = %s (%s), want succeeded", first.ID, got.Status, got.Error)
	}
	if runs := results(t, e.base, first.ID); len(runs) != 1 || runs[0].Result.CompleteRequests != 50 {
		t.Errorf("results = %+v, want one run of 50 requests", runs)
	}
}

// clusterWebhook: the job's end is delivered to a loopback receiver and
// logged as delivered.
func clusterWebhook(t *testing.T, e *clusterEnv) {
	var mu sync.Mutex
	var events []string
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p struct {
			Type string `json:"type"`
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		mu.Lock()
		events = append(events, p.Type)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rcv.Close)
	spec := e.smallSpec("webhook")
	spec["webhook"] = map[string]any{"url": rcv.URL + "/hook", "events": []string{"job.succeeded"}}
	j := submit(t, e.base, spec)
	if got := waitJob(t, e.base, j.ID, time.Minute); got.Status != "succeeded" {
		t.Fatalf("job %s = %s (%s), want succeeded", j.ID, got.Status, got.Error)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, b := call(t, http.MethodGet, e.base+"/v1/jobs/"+j.ID+"/deliveries", nil)
		var d struct {
			Deliveries []struct {
				Event  string `json:"event"`
				Status string `json:"status"`
			} `json:"deliveries"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &d) != nil {
			t.Fatalf("GET deliveries = %d %s", resp.StatusCode, b)
		}
		if len(d.Deliveries) == 1 && d.Deliveries[0].Status == "delivered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries after 30 s = %s, want one delivered", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0] != "job.succeeded" {
		t.Errorf("receiver got %v, want one job.succeeded", events)
	}
}

// clusterCompareTo: a job gated on the newest job with a label (found
// through the owner's index) ends with a verdict against it.
func clusterCompareTo(t *testing.T, e *clusterEnv) {
	baseSpec := e.smallSpec("baseline")
	baseSpec["labels"] = map[string]string{"branch": "main"}
	baseline := submit(t, e.base, baseSpec)
	if got := waitJob(t, e.base, baseline.ID, time.Minute); got.Status != "succeeded" {
		t.Fatalf("baseline %s = %s (%s)", baseline.ID, got.Status, got.Error)
	}
	spec := e.smallSpec("candidate")
	spec["compare_to"] = map[string]any{"labels": map[string]string{"branch": "main"}, "status": "succeeded"}
	spec["thresholds"] = []string{"failed <= baseline.failed", "complete >= baseline.complete"}
	j := submit(t, e.base, spec)
	got := waitJob(t, e.base, j.ID, time.Minute)
	if got.Status != "succeeded" || got.Verdict != "pass" {
		t.Fatalf("candidate %s = %s verdict %q (%s), want succeeded with pass", j.ID, got.Status, got.Verdict, got.Error)
	}
	_, b := call(t, http.MethodGet, e.base+"/v1/jobs/"+j.ID, nil)
	if !strings.Contains(string(b), baseline.ID) {
		t.Errorf("candidate %s does not name baseline %s: %s", j.ID, baseline.ID, b)
	}
}

// clusterShardedPoint: one run split over the three workers meets in a
// round whose keys and scripts stay in the job's slot.
func clusterShardedPoint(t *testing.T, e *clusterEnv) {
	j := submit(t, e.base, map[string]any{
		"name":    "sharded",
		"targets": []map[string]string{{"name": "a", "url": e.target.URL}},
		"sweep":   map[string]any{"concurrency": []int{6}, "requests": []int{3000}, "shards": 3},
	})
	if got := waitJob(t, e.base, j.ID, time.Minute); got.Status != "succeeded" {
		t.Fatalf("job %s = %s (%s), want succeeded", j.ID, got.Status, got.Error)
	}
	runs := results(t, e.base, j.ID)
	if len(runs) != 1 {
		t.Fatalf("%d runs stored, want 1", len(runs))
	}
	jobtest.CheckShardedRun(t, runs[0], 3, 3000, 6)
}

// clusterMetrics: /metrics reads the job counts from the store's indexes
// and the queue depths through asynq's inspector.
func clusterMetrics(t *testing.T, e *clusterEnv) {
	resp, b := call(t, http.MethodGet, e.base+"/metrics", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", resp.StatusCode, b)
	}
	for _, want := range []string{`benchq_jobs{status="succeeded"}`, `asynq_queue_size{queue="jobs"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestSentinelFailoverMidJob runs serve and a worker on redis+sentinel://
// and kills the master (SIGKILL) while a job runs; the sentinel promotes
// the replica. The job must succeed with every repeat stored once and
// complete, and the target must have served every stored run's requests,
// plus at most the one run that was in flight when the master died.
func TestSentinelFailoverMidJob(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test kills the Redis master mid-job; skipped with -short")
	}
	rs := redistest.StartSentinel(t)
	se := startServe(t, rs.URL())
	base := se.base
	worker := startProcess(t, se.bin, se.env, "worker")
	tg := testservers.StartTarget(t, "ok", crashDelay)

	const repeats = 10 // each run about 0.42 s
	j := submit(t, base, map[string]any{
		"name":    "sentinel failover",
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep": map[string]any{"concurrency": []int{2}, "requests": []int{crashRequests},
			"repeats": repeats, "order": "sequential"},
	})
	waitRuns(t, base, j.ID, 3, time.Minute)
	time.Sleep(150 * time.Millisecond) // into the next run
	rs.Master.Kill()
	killed := time.Now()
	took := rs.WaitPromoted(t, 30*time.Second)
	t.Logf("master killed; replica promoted %s later", took.Round(10*time.Millisecond))

	got := waitJob(t, base, j.ID, 2*time.Minute)
	runs := runsOf(t, base, j.ID)
	t.Logf("job %s: %s %s after the kill, %d runs", j.ID, got.Status, time.Since(killed).Round(100*time.Millisecond), len(runs))
	if got.Status != "succeeded" || got.Progress.RunsDone != repeats {
		t.Errorf("job = %s (%s) with %d runs done, want succeeded with %d", got.Status, got.Error, got.Progress.RunsDone, repeats)
	}
	seen := map[int]int{}
	for _, r := range runs {
		seen[r.Repeat]++
		if r.Result.CompleteRequests != crashRequests || r.Result.FailedRequests != 0 {
			t.Errorf("repeat %d: complete %d, failed %d; want %d and 0", r.Repeat, r.Result.CompleteRequests, r.Result.FailedRequests, crashRequests)
		}
	}
	for i := range repeats {
		if seen[i] != 1 {
			t.Errorf("repeat %d stored %d times, want once", i, seen[i])
		}
	}
	lo := int64(len(runs) * crashRequests)
	hits := tg.Hits()
	t.Logf("target served %d requests for %d stored runs", hits, len(runs))
	if hits < lo || hits > lo+crashRequests {
		t.Errorf("target served %d requests, want %d to %d: every stored run, plus at most the one in flight", hits, lo, lo+crashRequests)
	}
	worker.Stop(t)
	se.api.Stop(t)
}

// clusterCancelAndList: a running job canceled through the API ends
// canceled, and the listings by status find each job of the cases before
// in the index of the status it has.
func clusterCancelAndList(t *testing.T, e *clusterEnv) {
	tg := testservers.StartTarget(t, "ok", crashDelay)
	j := submit(t, e.base, map[string]any{
		"name":    "cancel",
		"targets": []map[string]string{{"url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{2}, "requests": []int{crashRequests}, "repeats": 20},
	})
	waitRuns(t, e.base, j.ID, 1, time.Minute)
	if resp, b := call(t, http.MethodDelete, e.base+"/v1/jobs/"+j.ID, nil); resp.StatusCode >= 300 {
		t.Fatalf("DELETE /v1/jobs/%s = %d %s", j.ID, resp.StatusCode, b)
	}
	if got := waitJob(t, e.base, j.ID, time.Minute); got.Status != "canceled" {
		t.Fatalf("job %s = %s, want canceled", j.ID, got.Status)
	}
	listed := map[string]string{}
	for _, st := range []string{"queued", "running", "succeeded", "failed", "canceled"} {
		resp, b := call(t, http.MethodGet, e.base+"/v1/jobs?limit=100&status="+st, nil)
		var l struct {
			Jobs []apiJob `json:"jobs"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &l) != nil {
			t.Fatalf("GET /v1/jobs?status=%s = %d %s", st, resp.StatusCode, b)
		}
		for _, lj := range l.Jobs {
			if prev, dup := listed[lj.ID]; dup || lj.Status != st {
				t.Errorf("job %s listed under %s with status %s (also under %q)", lj.ID, st, lj.Status, prev)
			}
			listed[lj.ID] = st
		}
	}
	// At least one job of the Idempotency-Key case, one of the webhook
	// case, two of compare_to's and this one.
	if n := len(listed); n < 5 || listed[j.ID] != "canceled" {
		t.Errorf("listings by status = %v, want 5 jobs or more, with %s canceled", listed, j.ID)
	}
}
