package api

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/testservers"
)

func TestHealthAndReady(t *testing.T) {
	env := newTestEnv(t, nil)
	if resp, body := env.do(t, http.MethodGet, "/healthz", ""); resp.StatusCode != 200 || !strings.Contains(string(body), `"ok"`) {
		t.Errorf("GET /healthz = %d %s, want 200 ok", resp.StatusCode, body)
	}
	if resp, _ := env.do(t, http.MethodGet, "/readyz", ""); resp.StatusCode != 200 {
		t.Errorf("GET /readyz with Redis up = %d, want 200", resp.StatusCode)
	}
	env.store.mu.Lock()
	env.store.probeErr = errors.New("NOAUTH Authentication required. secret")
	env.store.mu.Unlock()
	// The probe is cached for a second.
	deadline := time.Now().Add(3 * time.Second)
	resp, body := env.do(t, http.MethodGet, "/readyz", "")
	for resp.StatusCode == 200 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		resp, body = env.do(t, http.MethodGet, "/readyz", "")
	}
	if p := problem(t, resp, body); resp.StatusCode != 503 || p.Type != problemBase+"unavailable" || strings.Contains(string(body), "secret") {
		t.Errorf("GET /readyz with Redis refusing the probe = %d %s, want 503 unavailable without detail", resp.StatusCode, body)
	}
}

func TestMetrics(t *testing.T) {
	env := newTestEnv(t, nil)
	seedJob(env, "a", job.StatusRunning)
	seedJob(env, "b", job.StatusRunning)
	env.do(t, http.MethodGet, "/v1/jobs/a", "")
	env.do(t, http.MethodGet, "/v1/jobs/zzz", "")
	_, body := env.do(t, http.MethodGet, "/metrics", "")
	for _, want := range []string{
		`benchq_http_request_duration_seconds_count{method="GET",route="/v1/jobs/:id",status="200"} 1`,
		`benchq_http_request_duration_seconds_count{method="GET",route="/v1/jobs/:id",status="404"} 1`,
		`benchq_jobs{status="running"} 2`,
		`benchq_jobs{status="queued"} 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestOpenAPIAndDocs(t *testing.T) {
	env := newTestEnv(t, nil)
	resp, body := env.do(t, http.MethodGet, "/openapi.json", "")
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /openapi.json = %d: %v", resp.StatusCode, err)
	}
	for path, method := range map[string]string{"/v1/jobs": "post", "/v1/jobs/{id}": "delete", "/v1/jobs/{id}/events": "get", "/readyz": "get"} {
		if _, ok := doc.Paths[path][method]; !ok {
			t.Errorf("openapi.json lacks %s %s", method, path)
		}
	}
	resp, body = env.do(t, http.MethodGet, "/docs/index.html", "")
	if resp.StatusCode != 200 || !strings.Contains(string(body), "swagger") {
		t.Errorf("GET /docs/index.html = %d, want the Swagger UI page", resp.StatusCode)
	}
}

// TestSlowHeadersAreCut holds a connection open with half a request line:
// the read-header timeout must close it (slowloris).
func TestSlowHeadersAreCut(t *testing.T) {
	srv := New(Config{CheckURL: testservers.LoopbackOnly, ReadHeaderTimeout: 200 * time.Millisecond}, Deps{Store: newFakeStore(), Queue: &jobtest.Queue{}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Shutdown(t.Context()) })
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	for {
		if _, err := conn.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("server kept a connection with unfinished headers open for 5s")
			}
			return // closed by the server
		}
	}
}
