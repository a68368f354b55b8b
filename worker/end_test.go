package worker_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/api"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/internal/webhook"
	"github.com/benchq/benchq/worker"
)

// serveAPI serves the API on the test's store, in the open mode (the
// owner of its jobs is "anonymous"), and returns its URL.
func (e *env) serveAPI(t *testing.T) string {
	t.Helper()
	srv := api.New(api.Config{OpenUntilFirstKey: true, CheckURL: func(*url.URL) error { return nil }}, api.Deps{Store: e.st, Queue: e.queue})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

// closedPort is a loopback URL nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String() + "/"
	_ = ln.Close()
	return u
}

// TestEveryEndFinishesOnce: whichever path ends a job, it ends with one
// job.finished event, one end notice and an analysis kept on the job.
func TestEveryEndFinishesOnce(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, e *env) job.Spec
		act   func(t *testing.T, e *env, id string) // while the job runs
		want  job.Status
	}{
		{"succeeded", func(t *testing.T, e *env) job.Spec {
			return closedSpec([]int{1}, []int{20}, 1, testservers.StartTarget(t, "hello benchq", 0))
		}, nil, job.StatusSucceeded},
		{"failed", func(t *testing.T, e *env) job.Spec {
			return job.Spec{Targets: []job.Target{{Name: "a", URL: closedPort(t)}}, Sweep: job.Sweep{Concurrency: []int{1}, Requests: []int{5}}}
		}, nil, job.StatusFailed},
		{"canceled", func(t *testing.T, e *env) job.Spec {
			return closedSpec([]int{1}, []int{1000}, 1, testservers.StartTarget(t, "hello benchq", 20*time.Millisecond))
		}, func(t *testing.T, e *env, id string) {
			e.waitJob(t, id, 10*time.Second, "running", func(j *job.Job) bool { return j.Status == job.StatusRunning })
			if _, err := e.requestCancel(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}, job.StatusCanceled},
		{"canceled while queued, by the API", func(t *testing.T, e *env) job.Spec {
			return closedSpec([]int{1}, []int{20}, 1, testservers.StartTarget(t, "hello benchq", 0))
		}, nil, job.StatusCanceled},
		{"abandoned", func(t *testing.T, e *env) job.Spec {
			return closedSpec([]int{1}, []int{20}, 1, testservers.StartTarget(t, "hello benchq", 0))
		}, nil, job.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			j, task := e.createAs(t, "anonymous", tt.setup(t, e))
			if tt.name == "abandoned" {
				// Every read of the runs fails as a Redis error does: the
				// only attempt gives up and the job is abandoned.
				if err := e.rdb.Set(t.Context(), "benchq:job:{"+j.ID+"}:runs", "not a hash", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.queue.EnqueueContext(t.Context(), task, asynq.MaxRetry(0)); err != nil {
				t.Fatal(err)
			}
			if tt.name == "canceled while queued, by the API" {
				req, err := http.NewRequest(http.MethodDelete, e.serveAPI(t)+"/v1/jobs/"+j.ID, nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					t.Fatalf("DELETE = %d, want 202", resp.StatusCode)
				}
			}
			told := &notices{}
			stop := e.runWorker(t, worker.Config{ShutdownTimeout: 2 * time.Second, Notifier: told})
			if tt.act != nil {
				tt.act(t, e, j.ID)
			}
			got := e.waitJob(t, j.ID, 15*time.Second, "an end", terminal)
			// Give the attempt time to notify, then stop the worker: every
			// attempt has returned, so nothing more is told.
			endNotices := func() (n int) {
				for _, ev := range told.got() {
					if ev != job.EventStarted {
						n++
					}
				}
				return n
			}
			deadline := time.Now().Add(5 * time.Second)
			for endNotices() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			stop()
			if got.Status != tt.want {
				t.Errorf("job is %s (%q), want %s", got.Status, got.Error, tt.want)
			}
			for _, ev := range told.got() {
				if want := job.EventFor(tt.want); ev != job.EventStarted && ev != want {
					t.Errorf("notified %s, want %s", ev, want)
				}
			}
			if ends := endNotices(); ends != 1 {
				t.Errorf("end notices = %d (%v), want 1", ends, told.got())
			}
			events, err := e.st.ReadEvents(t.Context(), j.ID, "0", 0)
			if err != nil {
				t.Fatal(err)
			}
			finished := 0
			for _, ev := range events {
				if ev.Type == job.EventFinished {
					finished++
				}
			}
			if finished != 1 {
				t.Errorf("job.finished events = %d, want 1", finished)
			}
			if tt.name != "abandoned" && got.Analysis == nil {
				t.Errorf("job ended without its analysis")
			}
			if got.Status == job.StatusSucceeded && (got.Analysis == nil || got.Verdict != got.Analysis.Verdict.Result) {
				t.Errorf("verdict %q, not the stored analysis's", got.Verdict)
			}
		})
	}
}

// TestFinishedJobKeepsItsVerdict: a job judged against its compare_to job
// says the same, in the job, its results and its JSON report, after the
// compare_to job expired (its keys deleted as the retention TTL would).
func TestFinishedJobKeepsItsVerdict(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 0)
	stop := e.runWorker(t, worker.Config{ShutdownTimeout: 2 * time.Second})
	base, task := e.create(t, closedSpec([]int{1}, []int{50}, 1, tg))
	e.enqueue(t, task)
	e.waitJob(t, base.ID, 15*time.Second, "an end", terminal)
	spec := closedSpec([]int{1}, []int{50}, 1, tg)
	spec.CompareTo = &job.CompareTo{JobID: base.ID}
	spec.Thresholds = job.Thresholds("rps >= 0.01 * baseline.rps")
	spec.Webhook = &job.Webhook{URL: "http://127.0.0.1:1/hook"}
	cur, task := e.createAs(t, "anonymous", spec)
	e.enqueue(t, task)
	ended := e.waitJob(t, cur.ID, 15*time.Second, "an end", terminal)
	stop()
	if ended.Status != job.StatusSucceeded || ended.Verdict != job.VerdictPass {
		t.Fatalf("job is %s with verdict %q (%s), want succeeded with pass", ended.Status, ended.Verdict, ended.Error)
	}

	keys, err := e.rdb.Keys(t.Context(), "benchq:job:{"+base.ID+"}*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys of the compare_to job = %v, %v", keys, err)
	}
	if err := e.rdb.Del(t.Context(), keys...).Err(); err != nil {
		t.Fatal(err)
	}

	apiURL := e.serveAPI(t)
	get := func(path string, into any) []byte {
		t.Helper()
		resp, err := http.Get(apiURL + "/v1/jobs/" + cur.ID + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s, %v", path, resp.StatusCode, body, err)
		}
		if err := json.Unmarshal(body, into); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		return body
	}
	var jr api.JobResponse
	get("", &jr)
	var results struct {
		Analysis json.RawMessage `json:"analysis"`
	}
	get("/results", &results)
	var report struct {
		Analysis json.RawMessage `json:"analysis"`
	}
	get("/report?format=json", &report)
	var a job.Analysis
	if err := json.Unmarshal(results.Analysis, &a); err != nil {
		t.Fatal(err)
	}
	if jr.Verdict != job.VerdictPass || a.Verdict.Result != job.VerdictPass {
		t.Errorf("with the compare_to job gone: job verdict %q, results verdict %+v; want pass in both", jr.Verdict, a.Verdict)
	}
	var r1, r2 bytes.Buffer
	if err := json.Compact(&r1, results.Analysis); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&r2, report.Analysis); err != nil {
		t.Fatal(err)
	}
	if r1.String() != r2.String() {
		t.Errorf("/results analysis\n%s\n/report analysis\n%s\nwant the same document", r1.String(), r2.String())
	}

	// The webhook of the end, queued now, says the same.
	n := worker.NewWebhookNotifier(e.st, e.queue, worker.NotifierConfig{Logger: e.log})
	if err := n.Notify(t.Context(), ended, job.EventFor(job.StatusSucceeded)); err != nil {
		t.Fatal(err)
	}
	ds, err := e.st.Deliveries(t.Context(), cur.ID)
	if err != nil || len(ds) != 1 {
		t.Fatalf("Deliveries = %d, %v; want 1", len(ds), err)
	}
	var p webhook.Payload
	if err := json.Unmarshal(ds[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Data.Verdict != job.VerdictPass || len(p.Data.Failures) != 0 || p.Data.CompareTo != base.ID {
		t.Errorf("webhook: verdict %q, failures %+v, compare_to %q; want pass, none, %s", p.Data.Verdict, p.Data.Failures, p.Data.CompareTo, base.ID)
	}
}
