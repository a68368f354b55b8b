package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/proctest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestEndToEndAllInOne runs benchq as `go run ./cmd/benchq` does (API, one
// worker, embedded Redis) and a 2×2×2 sweep against two loopback targets.
func TestEndToEndAllInOne(t *testing.T) {
	m := startMain(t, nil)
	a, b := testservers.StartTarget(t, "hello from a", 0), testservers.StartTarget(t, "hello from b", 0)
	j := submit(t, m.URL(), sweepSpec(a, b))
	if j.Status != "queued" || j.Progress.RunsTotal != 8 {
		t.Errorf("submitted job = %s with %d runs, want queued with 8", j.Status, j.Progress.RunsTotal)
	}
	if got := waitJob(t, m.URL(), j.ID, 60*time.Second); got.Status != "succeeded" {
		t.Fatalf("job ended %s (%s), want succeeded", got.Status, got.Error)
	}
	checkSweep(t, results(t, m.URL(), j.ID), a, b)
}

// TestEndToEndServeAndWorkers runs the production shape as processes: a
// real redis-server, `benchq serve` and two `benchq worker`.
func TestEndToEndServeAndWorkers(t *testing.T) {
	rs := redistest.Start(t)
	se := startServe(t, rs.URL())
	base := se.base
	workers := []*process{startProcess(t, se.bin, se.env, "worker"), startProcess(t, se.bin, se.env, "worker")}

	a, b := testservers.StartTarget(t, "a", 0), testservers.StartTarget(t, "b", 0)
	j1 := submit(t, base, sweepSpec(a, b))
	j2 := submit(t, base, sweepSpec(a, b))
	for _, j := range []apiJob{j1, j2} {
		if got := waitJob(t, base, j.ID, 90*time.Second); got.Status != "succeeded" {
			t.Fatalf("job %s ended %s (%s), want succeeded", j.ID, got.Status, got.Error)
		}
	}
	checkSweep(t, results(t, base, j1.ID), a, b)
	if n := len(results(t, base, j2.ID)); n != 8 {
		t.Errorf("second job has %d runs, want 8", n)
	}
	for _, p := range append(workers, se.api) {
		p.Stop(t)
	}
}

// TestBadInputEndToEnd sends hostile bodies through the real wiring: each
// must be a 4xx problem naming the field, never a 5xx.
func TestBadInputEndToEnd(t *testing.T) {
	// The stub resolver knows no public name, so "example.com" is refused
	// without a DNS query leaving the machine.
	m := startMainWith(t, nil, func(m *Main) { m.Resolver = stagingResolver{} })
	ok := `"targets":[{"url":"http://127.0.0.1:9/"}]`
	tests := []struct {
		name   string
		body   string
		status int
		field  string
	}{
		{"malformed JSON", `{"targets":`, 400, ""},
		{"unknown field", `{` + ok + `,"surprise":true}`, 422, "surprise"},
		{"wrong type", `{"targets":[{"url":42}]}`, 422, "targets[0].url"},
		{"10 MB body", `{"name":"` + strings.Repeat("x", 10<<20) + `"}`, 413, ""},
		{"file URL", `{"targets":[{"url":"file:///etc/passwd"}]}`, 422, "targets[0].url"},
		{"gopher URL", `{"targets":[{"url":"gopher://127.0.0.1:70/"}]}`, 422, "targets[0].url"},
		// Refused by the address policy at submission, never dialed.
		{"private address", `{"targets":[{"url":"http://10.0.0.1/"}]}`, 422, "targets[0].url"},
		{"metadata address", `{"targets":[{"url":"http://169.254.169.254/latest/"}]}`, 422, "targets[0].url"},
		{"public name", `{"targets":[{"url":"http://example.com/"}]}`, 422, "targets[0].url"},
		{"concurrency 0", `{` + ok + `,"sweep":{"concurrency":[0],"requests":[10]}}`, 422, "sweep.concurrency[0]"},
		{"concurrency 100000", `{` + ok + `,"sweep":{"concurrency":[100000],"requests":[100000]}}`, 422, "sweep.concurrency[0]"},
		{"requests below concurrency", `{` + ok + `,"sweep":{"concurrency":[50],"requests":[10]}}`, 422, "sweep.requests"},
		{"more shards than workers", `{` + ok + `,"sweep":{"concurrency":[2],"requests":[10],"shards":3}}`, 422, "sweep.shards"},
		{"unparsable duration", `{` + ok + `,"sweep":{"duration":["a while"]}}`, 422, "sweep.duration[0]"},
		{"exclusive not a bool", `{` + ok + `,"exclusive":"no"}`, 422, "exclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := call(t, http.MethodPost, m.URL()+"/v1/jobs", []byte(tt.body))
			if resp.StatusCode != tt.status {
				t.Fatalf("POST = %d %s, want %d", resp.StatusCode, b, tt.status)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("Content-Type = %q, want application/problem+json", ct)
			}
			var p struct {
				Type   string `json:"type"`
				Field  string `json:"field"`
				Errors []struct {
					Field string `json:"field"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(b, &p); err != nil || !strings.HasPrefix(p.Type, "https://benchq.dev/problems/") {
				t.Fatalf("problem %s: %v", b, err)
			}
			named := strings.HasPrefix(p.Field, tt.field)
			for _, e := range p.Errors {
				named = named || strings.HasPrefix(e.Field, tt.field)
			}
			if !named {
				t.Errorf("problem %s does not name %q", b, tt.field)
			}
		})
	}
}

// The fault and end-to-end tests run the real binary through proctest.
type process = proctest.Process

func buildBenchq(t *testing.T) string { return proctest.Build(t) }

func startProcess(t *testing.T, bin string, env []string, args ...string) *process {
	t.Helper()
	return proctest.Start(t, bin, env, args...)
}

// serviceEnv is the environment of a benchq process of these tests on
// redisURL, with extra after it: serve and worker refuse loopback
// targets unless the operator allows them.
func serviceEnv(redisURL string, extra ...string) []string {
	env := append(os.Environ(), "BENCHQ_REDIS_URL="+redisURL, "BENCHQ_SHUTDOWN_TIMEOUT=10s", "BENCHQ_ALLOW_TARGETS=127.0.0.0/8")
	return append(env, extra...)
}

// serveEnv is `benchq serve` as a process of its own, and what its
// workers start with.
type serveEnv struct {
	bin  string
	env  []string
	api  *process
	base string // the API's, with a key as its user (keyedBase)
}

// startServe runs `benchq serve` on redisURL with serviceEnv(redisURL,
// extraEnv...) and makes a key for base.
func startServe(t *testing.T, redisURL string, extraEnv ...string) *serveEnv {
	t.Helper()
	s := &serveEnv{bin: buildBenchq(t), env: serviceEnv(redisURL, extraEnv...)}
	s.api = startProcess(t, s.bin, s.env, "serve", "--addr", "127.0.0.1:0")
	s.base = keyedBase(t, redisURL, s.api.WaitAddr(t))
	return s
}
