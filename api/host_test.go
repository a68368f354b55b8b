package api

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestHostRule: the open mode answers only Host values that name its
// listen address (localhost, 127.0.0.1 and [::1] alike, with its port);
// a server given a public URL or allowed hosts answers those too; a
// keyed server given neither answers any Host. The probes answer any.
func TestHostRule(t *testing.T) {
	type want map[string]int // Host (PORT = the listener's port) -> status of GET path
	tests := []struct {
		name string
		cfg  func(*Config)
		path string
		want want
	}{
		{"open mode", nil, "/v1/jobs", want{
			"127.0.0.1:PORT": 200, "localhost:PORT": 200, "LOCALHOST:PORT": 200, "[::1]:PORT": 200,
			"evil.example:PORT": 421, "evil.example": 421, "localhost": 421, "127.0.0.1": 421,
			"localhost:1": 421, "127.0.0.2:PORT": 421, "localhost.:PORT": 421,
		}},
		{"open mode, the dashboard", nil, "/ui/", want{"127.0.0.1:PORT": 200, "evil.example:PORT": 421}},
		{"open mode, the docs", nil, "/openapi.json", want{"localhost:PORT": 200, "evil.example:PORT": 421}},
		{"open mode, the probes", nil, "/healthz", want{"evil.example:PORT": 200, "10.1.2.3:8080": 200}},
		{"keyed, no names: behind a load balancer", func(c *Config) { c.OpenUntilFirstKey = false }, "/v1/jobs", want{
			"benchq.example": 401, "evil.example:PORT": 401, "127.0.0.1:PORT": 401,
		}},
		{"keyed with a public URL", func(c *Config) {
			c.OpenUntilFirstKey, c.PublicURL = false, "https://Benchq.example/base"
		}, "/v1/jobs", want{
			"benchq.example": 401, "benchq.example:8443": 401, "127.0.0.1:PORT": 401,
			"evil.example": 421, "benchq.example.evil.example": 421,
		}},
		{"keyed with a public URL, probe by pod IP", func(c *Config) {
			c.OpenUntilFirstKey, c.PublicURL = false, "https://benchq.example"
		}, "/readyz", want{"10.1.2.3:8080": 200}},
		{"keyed with allowed hosts", func(c *Config) {
			c.OpenUntilFirstKey, c.AllowedHosts = false, []string{"lb.example:8443", "benchq-api.benchq.svc", "[fd00::1]"}
		}, "/v1/jobs", want{
			"lb.example:8443": 401, "lb.example:80": 421, "lb.example": 421,
			"benchq-api.benchq.svc": 401, "benchq-api.benchq.svc:80": 401, "[fd00::1]:8080": 401,
			"evil.example": 421,
		}},
		{"open mode with allowed hosts", func(c *Config) { c.AllowedHosts = []string{"dev.example"} }, "/v1/jobs", want{
			"dev.example:9999": 200, "localhost:PORT": 200, "evil.example:PORT": 421,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t, tt.cfg)
			u, _ := url.Parse(env.url)
			for host, status := range tt.want {
				host = strings.ReplaceAll(host, "PORT", u.Port())
				resp, body := send(t, env.url, http.MethodGet, tt.path, "", map[string]string{"Host": host})
				if resp.StatusCode != status {
					t.Errorf("GET %s with Host %q = %d, want %d:\n%.300s", tt.path, host, resp.StatusCode, status, body)
					continue
				}
				if status != http.StatusMisdirectedRequest {
					continue
				}
				p := problem(t, resp, body)
				if p.Type != problemBase+"misdirected-request" || !strings.Contains(p.Detail, "http://127.0.0.1:"+u.Port()) || !strings.Contains(p.Detail, "--allowed-hosts") {
					t.Errorf("421 problem = %+v, want it to name the address to use and --allowed-hosts", p)
				}
			}
		})
	}
}

// TestHostRuleReadsNothing: a rebinding page's GET of a job is 421 with
// no byte of the job, and its POST creates nothing.
func TestHostRuleReadsNothing(t *testing.T) {
	env := newTestEnv(t, nil)
	resp, body := env.do(t, http.MethodPost, "/v1/jobs", validSpec)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs = %d %s", resp.StatusCode, body)
	}
	loc := resp.Header.Get("Location")
	id := loc[strings.LastIndex(loc, "/")+1:]
	u, _ := url.Parse(env.url)
	evil := map[string]string{"Host": "evil.example:" + u.Port()}
	for _, path := range []string{loc, loc + "/results", "/v1/jobs", "/ui/jobs/" + id} {
		resp, body := send(t, env.url, http.MethodGet, path, "", evil)
		if resp.StatusCode != http.StatusMisdirectedRequest || strings.Contains(string(body), "127.0.0.1:9000") {
			t.Errorf("GET %s from a rebinding page = %d %.200s, want 421 without the job", path, resp.StatusCode, body)
		}
	}
	before := env.queued()
	evil["Content-Type"] = "application/json"
	evil["Origin"] = "http://" + evil["Host"] // same-origin, as a rebinding page is
	if resp, body := send(t, env.url, http.MethodPost, "/v1/jobs", validSpec, evil); resp.StatusCode != http.StatusMisdirectedRequest || env.queued() != before {
		t.Errorf("POST from a rebinding page = %d %s, %d tasks enqueued, want 421 and none", resp.StatusCode, body, env.queued()-before)
	}
}

// TestHostRuleListening: a keyed listener beyond loopback with no names
// (serve behind a load balancer) drops the check; one given names, or a
// loopback one, keeps it.
func TestHostRuleListening(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		addr string
		want bool
	}{
		{"all-in-one on loopback", Config{OpenUntilFirstKey: true}, "127.0.0.1:8080", true},
		{"all-in-one on every interface (keyed)", Config{OpenUntilFirstKey: true}, "0.0.0.0:8080", false},
		{"serve on every interface", Config{}, "0.0.0.0:8080", false},
		{"serve on loopback", Config{}, "127.0.0.1:8080", false},
		{"serve with a public URL", Config{PublicURL: "https://benchq.example"}, "0.0.0.0:8080", true},
		{"serve with allowed hosts", Config{AllowedHosts: []string{"lb.example"}}, "0.0.0.0:8080", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHostRule(tt.cfg)
			addr, err := net.ResolveTCPAddr("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			h.listening(addr)
			if got := h.enforced.Load(); got != tt.want {
				t.Errorf("enforced = %v, want %v", got, tt.want)
			}
		})
	}
}
