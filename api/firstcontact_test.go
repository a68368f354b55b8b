package api

import (
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/logbuf"
)

// TestRootRedirectsToDashboard: the service's bare address sends a
// browser to the dashboard.
func TestRootRedirectsToDashboard(t *testing.T) {
	env := newTestEnv(t, nil)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(env.url + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("GET / = %d Location %q, want 302 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestProbesLoggedAtDebug: successful health probes and metric scrapes
// are request lines at DEBUG, so an INFO log is not filled with them; a
// failing probe and any other request stay at INFO.
func TestProbesLoggedAtDebug(t *testing.T) {
	logs := &logbuf.Buffer{}
	env := newTestEnv(t, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/v1/jobs"} {
		if resp, body := env.do(t, http.MethodGet, path, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
		}
	}
	level := func(path string) string {
		t.Helper()
		m := regexp.MustCompile(`level=(\w+) msg="http request".* path=` + regexp.QuoteMeta(path) + ` `).FindStringSubmatch(logs.String())
		if m == nil {
			t.Fatalf("no request line for %s in:\n%s", path, logs.String())
		}
		return m[1]
	}
	for path, want := range map[string]string{"/healthz": "DEBUG", "/readyz": "DEBUG", "/metrics": "DEBUG", "/v1/jobs": "INFO"} {
		if got := level(path); got != want {
			t.Errorf("GET %s logged at %s, want %s", path, got, want)
		}
	}

	// A probe that fails is what an operator must see.
	env.store.mu.Lock()
	env.store.probeErr = errors.New("connection refused")
	env.store.mu.Unlock()
	deadline := time.Now().Add(3 * time.Second) // the probe is cached for a second
	for {
		resp, _ := env.do(t, http.MethodGet, "/readyz", "")
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /readyz with Redis down = %d, want 503", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !regexp.MustCompile(`level=INFO msg="http request".* path=/readyz .*status=503`).MatchString(logs.String()) {
		t.Errorf("a failing /readyz is not logged at INFO:\n%s", lastLines(logs.String(), 5))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
