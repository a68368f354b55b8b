package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
)

// ownedHost is a loopback target that can publish a verification token.
// It counts verification fetches apart from every other request (load).
type ownedHost struct {
	*httptest.Server
	load, verifies atomic.Int64

	mu    sync.Mutex
	token string // served at its path while set
	// servesLeft, when positive, is how many more verification fetches
	// find the token before it is withdrawn: a host owner deleting the
	// file between submission and run, without a sleep in the test.
	servesLeft int
}

func newOwnedHost(t *testing.T) *ownedHost {
	h := &ownedHost{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/benchq-verify-") {
			h.load.Add(1)
			fmt.Fprint(w, "hello benchq")
			return
		}
		h.verifies.Add(1)
		h.mu.Lock()
		tok := h.token
		if h.servesLeft > 0 {
			if h.servesLeft--; h.servesLeft == 0 {
				h.token = ""
			}
		}
		h.mu.Unlock()
		if tok == "" || r.URL.Path != "/benchq-verify-"+tok+".txt" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, tok)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *ownedHost) publish(token string, serves int) {
	h.mu.Lock()
	h.token, h.servesLeft = token, serves
	h.mu.Unlock()
}

// apiProblem is what the tests read of a problem+json answer.
type apiProblem struct {
	Type   string `json:"type"`
	Field  string `json:"field"`
	Detail string `json:"detail"`
	Errors []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

type apiTargetHost struct {
	Host     string `json:"host"`
	Token    string `json:"token"`
	Path     string `json:"path"`
	Verified bool   `json:"verified"`
	Detail   string `json:"detail"`
}

func smallJob(url string) map[string]any {
	return map[string]any{
		"targets": []map[string]string{{"name": "a", "url": url + "/bench"}},
		"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{20}, "repeats": 1},
	}
}

func postJSON(t *testing.T, url string, v any) (*http.Response, []byte) {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return call(t, http.MethodPost, url, body)
}

// TestTargetVerificationEndToEnd: with --verify-targets, an unverified
// host is refused at submission, a verified one runs, and a host that
// withdraws its token after submission gets no load at all.
func TestTargetVerificationEndToEnd(t *testing.T) {
	rs := redistest.Start(t)
	m := startMain(t, func(c *config.Config) { c.RedisURL, c.VerifyTargets = rs.URL(), true })
	base := m.URL()
	h := newOwnedHost(t)

	resp, b := postJSON(t, base+"/v1/jobs", smallJob(h.URL))
	var p apiProblem
	if resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(b, &p) != nil ||
		p.Type != "https://benchq.dev/problems/target-unverified" || p.Field != "targets[0].url" {
		t.Fatalf("POST unverified job = %d %s, want 422 target-unverified naming targets[0].url", resp.StatusCode, b)
	}
	resp, b = call(t, http.MethodGet, base+"/v1/targets", nil)
	var list struct {
		Targets []apiTargetHost `json:"targets"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &list) != nil || len(list.Targets) != 1 || list.Targets[0].Verified {
		t.Fatalf("GET /v1/targets = %d %s, want the one unverified host", resp.StatusCode, b)
	}
	tok := list.Targets[0]
	if want := "/benchq-verify-" + tok.Token + ".txt"; tok.Path != want || !strings.Contains(p.Detail, h.URL+want) {
		t.Errorf("path %q and problem detail %q, want both to name %s%s", tok.Path, p.Detail, h.URL, want)
	}

	h.publish(tok.Token, 0)
	resp, b = postJSON(t, base+"/v1/targets/verify", map[string]string{"url": h.URL})
	var th apiTargetHost
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &th) != nil || !th.Verified || th.Token != tok.Token {
		t.Fatalf("POST /v1/targets/verify = %d %s, want 200 verified with the same token", resp.StatusCode, b)
	}
	j := submit(t, base, smallJob(h.URL))
	if got := waitJob(t, base, j.ID, 30*time.Second); got.Status != "succeeded" {
		t.Fatalf("verified job ended %s (%s), want succeeded", got.Status, got.Error)
	}
	if h.load.Load() < 20 {
		t.Fatalf("verified host served %d load requests, want at least 20", h.load.Load())
	}

	// The token is found by the submission check, then withdrawn before
	// the worker's check.
	load, verifies := h.load.Load(), h.verifies.Load()
	h.publish(tok.Token, 1)
	j = submit(t, base, smallJob(h.URL))
	got := waitJob(t, base, j.ID, 30*time.Second)
	if got.Status != "failed" || !strings.Contains(got.Error, "not verified") || !strings.Contains(got.Error, tok.Path) {
		t.Errorf("job after the token was withdrawn ended %s with %q; want failed, saying the host is not verified and naming %s", got.Status, got.Error, tok.Path)
	}
	if n := h.load.Load() - load; n != 0 {
		t.Errorf("host got %d load requests after withdrawing its token, want 0", n)
	}
	if n := h.verifies.Load() - verifies; n != 2 {
		t.Errorf("host got %d verification fetches, want 2 (submission, then the worker)", n)
	}
}

func TestVerifyEndpointRefusesBadURLs(t *testing.T) {
	m := startMain(t, nil) // all-in-one: loopback only
	for _, raw := range []string{"ftp://127.0.0.1/", "http://10.0.0.1/", "not a url", "http://"} {
		resp, b := postJSON(t, m.URL()+"/v1/targets/verify", map[string]string{"url": raw})
		var p apiProblem
		if resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(b, &p) != nil ||
			p.Type != "https://benchq.dev/problems/invalid-target" || p.Field != "url" {
			t.Errorf("verify %q = %d %s, want 422 invalid-target on field url", raw, resp.StatusCode, b)
		}
	}
	resp, b := call(t, http.MethodPost, m.URL()+"/v1/targets/verify", []byte(`{"url": "http://127.0.0.1:1/", "extra": 1}`))
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("verify with an unknown field = %d %s, want 400", resp.StatusCode, b)
	}
}

// TestPolicyOfEachCommand: serve refuses loopback and private targets
// unless --allow-targets lists them. serve runs no worker, so nothing
// here is ever dialed.
func TestPolicyOfEachCommand(t *testing.T) {
	tests := []struct {
		name    string
		command config.Command
		allow   []string
		url     string
		want    int
	}{
		{"serve refuses loopback", config.CommandServe, nil, "http://127.0.0.1:8081/", http.StatusUnprocessableEntity},
		{"serve refuses metadata", config.CommandServe, nil, "http://169.254.169.254/", http.StatusUnprocessableEntity},
		{"serve admits allowlisted loopback", config.CommandServe, []string{"127.0.0.0/8"}, "http://127.0.0.1:8081/", http.StatusAccepted},
		{"serve admits an allowlisted private range", config.CommandServe, []string{"10.20.0.0/16"}, "http://10.20.0.1:8081/", http.StatusAccepted},
		{"serve still refuses an unlisted private range", config.CommandServe, []string{"10.20.0.0/16"}, "http://10.21.0.1:8081/", http.StatusUnprocessableEntity},
		{"all refuses public", config.CommandAll, nil, "http://8.8.8.8/", http.StatusUnprocessableEntity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := redistest.Start(t)
			m := startMain(t, func(c *config.Config) {
				c.Command, c.RedisURL, c.AllowTargets = tt.command, rs.URL(), tt.allow
			})
			spec := map[string]any{
				"targets": []map[string]string{{"name": "a", "url": tt.url}},
				"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{1}},
			}
			base := m.URL()
			if tt.command == config.CommandServe {
				base = keyedBase(t, rs.URL(), m.Addr())
			}
			resp, b := postJSON(t, base+"/v1/jobs", spec)
			if resp.StatusCode != tt.want {
				t.Fatalf("POST %s = %d %s, want %d", tt.url, resp.StatusCode, b, tt.want)
			}
			var p apiProblem
			if tt.want == http.StatusUnprocessableEntity && (json.Unmarshal(b, &p) != nil || p.Field != "targets[0].url") {
				t.Errorf("problem %s does not name targets[0].url", b)
			}
		})
	}
}

// TestVerifyRefusesWhatItCannotVouchFor: with --verify-targets, a Host
// header naming another host than its URL (JSON headers or ab -H) and a
// spec with more distinct hosts than the cap are refused with a 422
// naming the field, before any request to any host.
func TestVerifyRefusesWhatItCannotVouchFor(t *testing.T) {
	rs := redistest.Start(t)
	m := startMain(t, func(c *config.Config) { c.RedisURL, c.VerifyTargets = rs.URL(), true })
	h := newOwnedHost(t)
	withHeaders := smallJob(h.URL)
	withHeaders["request"] = map[string]any{"headers": map[string]string{"Host": "victim.example"}}
	var many []map[string]string
	for i := range 17 {
		many = append(many, map[string]string{"url": fmt.Sprintf("http://127.0.0.%d:1/", i+1)})
	}
	tests := []struct {
		name, field string
		spec        map[string]any
	}{
		{"request header", `request.headers["Host"]`, withHeaders},
		{"ab -H", "targets[0].ab", map[string]any{
			"targets": []map[string]string{{"ab": "-n 20 -H 'Host: victim.example' " + h.URL + "/bench"}}}},
		{"17 hosts", "targets[16].url", map[string]any{"targets": many,
			"sweep": map[string]any{"concurrency": []int{1}, "requests": []int{1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := postJSON(t, m.URL()+"/v1/jobs", tt.spec)
			var p apiProblem
			if resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(b, &p) != nil || p.Field != tt.field {
				t.Errorf("POST = %d %s, want 422 naming %s", resp.StatusCode, b, tt.field)
			}
		})
	}
	if n := h.verifies.Load() + h.load.Load(); n != 0 {
		t.Errorf("host got %d requests, want none", n)
	}
}
