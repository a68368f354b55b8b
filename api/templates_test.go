package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
)

// keyedEnv is the API on a real redis-server with three keys: two
// tenants and an admin.
type keyedEnv struct {
	url               string
	alice, bob, admin string // plaintext keys
	aliceID           string
	st                *store.Store
}

func newKeyedEnv(t *testing.T) *keyedEnv {
	t.Helper()
	return newKeyedEnvWith(t, Config{})
}

// newKeyedEnvWith is newKeyedEnv with the server's config (its URL
// policy always loopback only).
func newKeyedEnvWith(t *testing.T, cfg Config) *keyedEnv {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	st := store.New(rdb, store.Options{})
	cfg.CheckURL = testservers.LoopbackOnly
	srv := New(cfg, Deps{Store: st, Queue: &jobtest.Queue{}, Keys: st, Quotas: st,
		Idempotency: st, Selector: st, Templates: st, Pinner: st})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	env := &keyedEnv{url: hs.URL, st: st}
	for _, k := range []struct {
		name  string
		admin bool
		plain *string
	}{{"alice", false, &env.alice}, {"bob", false, &env.bob}, {"admin", true, &env.admin}} {
		key, plain, err := apikey.New(k.name, k.admin, apikey.Quota{}, "", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AddKey(t.Context(), key); err != nil {
			t.Fatal(err)
		}
		*k.plain = plain
		if k.name == "alice" {
			env.aliceID = key.ID
		}
	}
	return env
}

func (e *keyedEnv) do(t *testing.T, key, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	return roundTrip(t, req)
}

const aliceTemplate = `{"name": "shop", "values": {"target_url": "http://127.0.0.1:9"},
  "spec": {"targets": [{"name": "a", "url": "{{target_url}}/b/{{branch}}"}], "labels": {"sha": "{{commit}}"}},
  "triggers": {"github": {"repository": "acme/shop", "secret": "alice-secret-0123456789"}}}`

func TestTemplatesAPI(t *testing.T) {
	env := newKeyedEnv(t)
	if resp, b := env.do(t, env.alice, http.MethodPost, "/v1/templates", aliceTemplate); resp.StatusCode != 201 ||
		strings.Contains(string(b), "alice-secret") || !strings.Contains(string(b), `"secret":"[redacted]"`) {
		t.Fatalf("POST /v1/templates = %d %s, want 201 with the secret redacted", resp.StatusCode, b)
	}
	tests := []struct {
		name, key, method, path, body string
		status                        int
		field                         string // the problem's field, for 4xx
	}{
		{"owner reads", env.alice, "GET", "/v1/templates/shop", "", 200, ""},
		{"another key: 404", env.bob, "GET", "/v1/templates/shop", "", 404, ""},
		{"another key cannot name the owner", env.bob, "GET", "/v1/templates/shop?owner=" + env.aliceID, "", 404, ""},
		{"another key cannot run it", env.bob, "POST", "/v1/templates/shop/run", `{}`, 404, ""},
		{"another key cannot delete it", env.bob, "DELETE", "/v1/templates/shop", "", 404, ""},
		{"admin reads by owner", env.admin, "GET", "/v1/templates/shop?owner=" + env.aliceID, "", 200, ""},
		{"create twice", env.alice, "POST", "/v1/templates", aliceTemplate, 409, ""},
		{"unknown placeholder", env.alice, "POST", "/v1/templates",
			`{"name": "bad", "spec": {"targets": [{"url": "http://127.0.0.1:9/{{nope}}"}]}}`, 422, "spec.targets[0].url"},
		{"spec field of the wrong type", env.alice, "POST", "/v1/templates",
			`{"name": "bad", "spec": {"targets": [{"url": 9}]}}`, 422, "spec.targets[0].url"},
		{"short secret", env.alice, "POST", "/v1/templates",
			`{"name": "bad", "spec": {"targets": [{"url": "http://127.0.0.1:9/"}]}, "triggers": {"github": {"repository": "a/b", "secret": "x"}}}`, 422, "triggers.github.secret"},
		{"undeclared value", env.alice, "POST", "/v1/templates/shop/run", `{"values": {"nope": "1"}}`, 422, "values.nope"},
		{"rendered job refused by the address policy", env.alice, "POST", "/v1/templates/shop/run",
			`{"values": {"target_url": "http://10.0.0.1", "commit": "abc", "branch": "main"}}`, 422, "targets[0].url"},
		{"run", env.alice, "POST", "/v1/templates/shop/run", `{"values": {"branch": "x@evil.example/", "commit": "abc"}}`, 201, ""},
		{"PUT keeps the secret", env.alice, "PUT", "/v1/templates/shop",
			`{"spec": {"targets": [{"url": "{{target_url}}"}]}, "values": {"target_url": "http://127.0.0.1:9"}, "triggers": {"github": {"repository": "acme/shop", "secret": "[redacted]"}}}`, 200, ""},
		{"PUT with another name", env.alice, "PUT", "/v1/templates/shop", `{"name": "other", "spec": {"targets": [{"url": "http://127.0.0.1:9/"}]}}`, 422, "name"},
	}
	var runJob JobResponse
	for _, tt := range tests {
		resp, b := env.do(t, tt.key, tt.method, tt.path, tt.body)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: %s %s = %d %s, want %d", tt.name, tt.method, tt.path, resp.StatusCode, b, tt.status)
			continue
		}
		if tt.status >= 400 {
			if p := problem(t, resp, b); tt.field != "" && !namesField(p, tt.field) {
				t.Errorf("%s: problem = %s, want one naming %q", tt.name, b, tt.field)
			}
		}
		if tt.name == "run" {
			if err := json.Unmarshal(b, &runJob); err != nil {
				t.Fatal(err)
			}
		}
	}
	if runJob.Spec.Labels["template"] != "shop" || runJob.Spec.Labels["sha"] != "abc" ||
		runJob.Spec.Targets[0].URL != "http://127.0.0.1:9/b/x%40evil.example%2F" {
		t.Errorf("run's job = labels %v, url %q; want template=shop, sha=abc and the branch escaped in the path",
			runJob.Spec.Labels, runJob.Spec.Targets[0].URL)
	}
	stored, err := env.st.GetTemplate(t.Context(), env.aliceID, "shop")
	if err != nil || stored.Triggers.GitHub.Secret != "alice-secret-0123456789" {
		t.Errorf("after a PUT sending [redacted], the stored secret = %v (%v), want the original", stored, err)
	}

	// Pins: the owner and an admin, not another key.
	pinTests := []struct {
		key, method string
		status      int
		pinned      bool
	}{
		{env.bob, "PUT", 404, false},
		{env.alice, "PUT", 200, true},
		{env.admin, "DELETE", 200, false},
		{env.admin, "PUT", 200, true},
	}
	for _, tt := range pinTests {
		resp, b := env.do(t, tt.key, tt.method, "/v1/jobs/"+runJob.ID+"/pin", "")
		var jr JobResponse
		if resp.StatusCode != tt.status || tt.status == 200 && (json.Unmarshal(b, &jr) != nil || jr.Pinned != tt.pinned) {
			t.Errorf("%s pin = %d %s, want %d pinned=%v", tt.method, resp.StatusCode, b, tt.status, tt.pinned)
		}
	}
	if resp, b := env.do(t, env.alice, "GET", "/v1/jobs/"+runJob.ID, ""); !strings.Contains(string(b), `"pinned":true`) {
		t.Errorf("GET job = %d %s, want pinned true", resp.StatusCode, b)
	}

	// Lists: each key its own; the admin every key's.
	if resp, b := env.do(t, env.bob, http.MethodPost, "/v1/templates", strings.Replace(aliceTemplate, "alice", "bobby", 1)); resp.StatusCode != 201 {
		t.Fatalf("bob's POST of his own shop = %d %s, want 201: names are per key", resp.StatusCode, b)
	}
	for _, tt := range []struct {
		key  string
		want int
	}{{env.alice, 1}, {env.bob, 1}, {env.admin, 2}} {
		resp, b := env.do(t, tt.key, "GET", "/v1/templates", "")
		var l ListTemplatesResponse
		if resp.StatusCode != 200 || json.Unmarshal(b, &l) != nil || len(l.Templates) != tt.want {
			t.Errorf("GET /v1/templates = %d %s, want %d templates", resp.StatusCode, b, tt.want)
		}
	}
	if resp, b := env.do(t, env.alice, "DELETE", "/v1/templates/shop", ""); resp.StatusCode != 204 {
		t.Errorf("DELETE = %d %s, want 204", resp.StatusCode, b)
	}
	if resp, _ := env.do(t, env.alice, "GET", "/v1/templates/shop", ""); resp.StatusCode != 404 {
		t.Errorf("GET after DELETE = %d, want 404", resp.StatusCode)
	}
}
