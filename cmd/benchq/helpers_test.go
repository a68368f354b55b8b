package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/proctest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

// startMain runs the whole service in-process on a free loopback port.
func startMain(t *testing.T, tune func(*config.Config)) *Main {
	t.Helper()
	return startMainWith(t, tune, nil)
}

// startOnRedis runs the whole service in-process on a redis-server of
// its own.
func startOnRedis(t *testing.T) *Main {
	t.Helper()
	rs := redistest.Start(t)
	return startMain(t, func(c *config.Config) { c.RedisURL = rs.URL() })
}

// startMainWith is startMain with prepare run on the Main before it
// starts, to set what is not configuration (its policy, its resolver).
func startMainWith(t *testing.T, tune func(*config.Config), prepare func(*Main)) *Main {
	t.Helper()
	return startMainLogged(t, tune, prepare, slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// startMainLogged is startMainWith logging to log.
func startMainLogged(t *testing.T, tune func(*config.Config), prepare func(*Main), log *slog.Logger) *Main {
	t.Helper()
	cfg := config.Defaults()
	cfg.Addr = "127.0.0.1:0"
	cfg.ShutdownTimeout = 10 * time.Second
	if tune != nil {
		tune(&cfg)
	}
	m := NewMain(cfg, log)
	if prepare != nil {
		prepare(m)
	}
	if err := m.Run(t.Context()); err != nil {
		t.Fatalf("Main.Run: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Main.Close: %v", err)
		}
	})
	return m
}

// testWriter sends log lines to t.Log, so they show only on failure.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// apiJob is what the tests read of a job.
type apiJob struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Error    string `json:"error"`
	Verdict  string `json:"verdict"`
	Progress struct {
		RunsTotal int `json:"runs_total"`
		RunsDone  int `json:"runs_done"`
	} `json:"progress"`
}

// call is proctest.Call, which these tests use often: it sends a body as
// JSON and the user of a keyedBase as its bearer token, and returns the
// answer with its body read.
func call(t *testing.T, method, url string, body []byte) (*http.Response, []byte) {
	t.Helper()
	return proctest.Call(t, method, url, body)
}

// keyedBase creates an API key in redisURL and returns the base URL of
// the API at addr with the key as its user ("http://KEY@addr"), which
// call sends as the bearer token: benchq serve admits no
// request without a key, so every helper taking a base works against it
// unchanged.
func keyedBase(t *testing.T, redisURL, addr string) string {
	t.Helper()
	code, key, errOut := keysCLI(t, redisURL, "add", "test")
	if code != clicmd.KeysExitOK {
		t.Fatalf("keys add = %d %s", code, errOut)
	}
	return "http://" + strings.TrimSpace(key) + "@" + addr
}

func submit(t *testing.T, base string, spec any) apiJob {
	t.Helper()
	body, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	resp, b := call(t, http.MethodPost, base+"/v1/jobs", body)
	var j apiJob
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &j) != nil || j.ID == "" {
		t.Fatalf("POST /v1/jobs = %d %s, want 202 with a job", resp.StatusCode, b)
	}
	if loc := resp.Header.Get("Location"); loc != "/v1/jobs/"+j.ID {
		t.Errorf("Location = %q, want /v1/jobs/%s", loc, j.ID)
	}
	return j
}

// waitJob polls a job until it is terminal or the limit passes.
func waitJob(t *testing.T, base, id string, limit time.Duration) apiJob {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+id, nil)
		var j apiJob
		if resp.StatusCode != 200 || json.Unmarshal(b, &j) != nil {
			t.Fatalf("GET /v1/jobs/%s = %d %s", id, resp.StatusCode, b)
		}
		switch j.Status {
		case "succeeded", "failed", "canceled":
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %s (%d/%d runs)", id, j.Status, limit, j.Progress.RunsDone, j.Progress.RunsTotal)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// results is the stored runs of job id, read through the API.
func results(t *testing.T, base, id string) []job.Run {
	t.Helper()
	resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+id+"/results", nil)
	var r struct {
		Runs []job.Run `json:"runs"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil {
		t.Fatalf("GET /v1/jobs/%s/results = %d %s", id, resp.StatusCode, b)
	}
	return r.Runs
}

// sweepSpec is the e2e job: 2 targets × concurrency [1,4] × 200 requests ×
// 2 repeats = 8 runs.
func sweepSpec(a, b *testservers.Target) map[string]any {
	return map[string]any{
		"name": "e2e",
		"targets": []map[string]string{
			{"name": "a", "url": a.URL},
			{"name": "b", "url": b.URL},
		},
		"sweep": map[string]any{"concurrency": []int{1, 4}, "requests": []int{200}, "repeats": 2},
	}
}

// checkSweep asserts the 8 runs of sweepSpec and the load the targets saw.
func checkSweep(t *testing.T, runs []job.Run, a, b *testservers.Target) {
	t.Helper()
	if len(runs) != 8 {
		t.Fatalf("results have %d runs, want 8", len(runs))
	}
	perLevel := map[string]int{}
	for _, r := range runs {
		if r.Result.CompleteRequests != 200 || r.Result.ConcurrencyLevel != r.Concurrency || r.Result.FailedRequests != 0 {
			t.Errorf("run %s c=%d: complete %d, concurrency_level %d, failed %d; want 200, %d, 0",
				r.Target, r.Concurrency, r.Result.CompleteRequests, r.Result.ConcurrencyLevel, r.Result.FailedRequests, r.Concurrency)
		}
		perLevel[fmt.Sprintf("%s/%d", r.Target, r.Concurrency)]++
	}
	for _, k := range []string{"a/1", "a/4", "b/1", "b/4"} {
		if perLevel[k] != 2 {
			t.Errorf("runs of %s = %d, want 2 (repeats)", k, perLevel[k])
		}
	}
	for name, tg := range map[string]*testservers.Target{"a": a, "b": b} {
		if got := tg.Hits(); got < 800 {
			t.Errorf("target %s served %d requests, want at least 800", name, got)
		}
	}
}
