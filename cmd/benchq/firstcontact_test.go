package main

import (
	"net/http"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/proctest"
)

// TestFirstContact runs the all-in-one as a person does at its default
// log level: the startup log names the dashboard's and the API's URLs once
// listening, the bare address redirects to the dashboard, and health
// probes and metric scrapes leave no line in the log while the other
// requests do.
func TestFirstContact(t *testing.T) {
	bin := buildBenchq(t)
	env := append(os.Environ(), "BENCHQ_LOG_LEVEL=info", "BENCHQ_LOG_FORMAT=text")
	p := startProcess(t, bin, env, "--ephemeral", "--addr", "127.0.0.1:0")
	m := p.WaitLine(t, regexp.MustCompile(`API listening.* addr=(127\.0\.0\.1:\d+).* dashboard=(\S+) api=(\S+)`), 30*time.Second)
	addr, dashboard, api := m[1], m[2], m[3]
	if dashboard != "http://"+addr+"/ui/" || api != "http://"+addr+"/v1/" {
		t.Errorf("startup log: dashboard=%s api=%s, want http://%s/ui/ and http://%s/v1/", dashboard, api, addr, addr)
	}
	if resp, body := proctest.Call(t, http.MethodGet, dashboard, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s (the logged dashboard URL) = %d %.200s", dashboard, resp.StatusCode, body)
	}

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET / = %d Location %q, want 302 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}

	for range 5 {
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			if resp, body := proctest.Call(t, http.MethodGet, "http://"+addr+path, nil); resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
			}
		}
	}
	// The log is in request order: once the marker's line is read, every
	// probe's line would have been.
	const marker = "/v1/jobs/job_after_the_probes"
	proctest.Call(t, http.MethodGet, "http://"+addr+marker, nil)
	requestLine := regexp.MustCompile(`msg="http request".* path=(\S+)`)
	for {
		path := p.WaitLine(t, requestLine, 10*time.Second)[1]
		if path == marker {
			break
		}
		switch path {
		case "/healthz", "/readyz", "/metrics":
			t.Errorf("GET %s is logged at the default level", path)
		}
	}
}
