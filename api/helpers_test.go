package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/testservers"
)

type testEnv struct {
	store *fakeStore
	queue *jobtest.Queue
	srv   *Server
	url   string
}

func newTestEnv(t *testing.T, tune func(*Config)) *testEnv {
	t.Helper()
	env := &testEnv{store: newFakeStore(), queue: &jobtest.Queue{}}
	cfg := Config{OpenUntilFirstKey: true, CheckURL: testservers.LoopbackOnly, Heartbeat: 50 * time.Millisecond, EventPoll: 20 * time.Millisecond}
	if tune != nil {
		tune(&cfg)
	}
	env.srv = New(cfg, Deps{Store: env.store, Queue: env.queue})
	hs := httptest.NewServer(env.srv.Handler())
	t.Cleanup(hs.Close)
	env.url = hs.URL
	return env
}

func (e *testEnv) do(t *testing.T, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" || method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json") // as every client of the open mode must
	}
	return roundTrip(t, req)
}

// roundTrip sends req and returns the answer with its body read; a
// transport error fails the test.
func roundTrip(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	return resp, b
}

// problem decodes a problem+json response, failing the test if it is not one.
func problem(t *testing.T, resp *http.Response, body []byte) Problem {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json (body %s)", ct, body)
	}
	var p Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("problem body %q: %v", body, err)
	}
	if p.Status != resp.StatusCode || !strings.HasPrefix(p.Type, problemBase) && p.Type != "about:blank" {
		t.Fatalf("problem = %+v for HTTP %d, want matching status and a benchq type", p, resp.StatusCode)
	}
	return p
}
