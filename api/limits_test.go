package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/cihook"
)

// limitProblem checks a 429 refusal: its type, and the limit and use it
// names.
func limitProblem(t *testing.T, what string, resp *http.Response, b []byte, slug string, limit, value int) {
	t.Helper()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("%s = %d %s, want 429 %s", what, resp.StatusCode, b, slug)
		return
	}
	var p Problem
	if err := json.Unmarshal(b, &p); err != nil || p.Type != problemBase+slug || p.Limit != limit || p.Value != value || p.Detail == "" {
		t.Errorf("%s: problem %s, want type %s, limit %d, value %d and a detail", what, b, slug, limit, value)
	}
}

func templateBody(name, repo string, extra string) string {
	return fmt.Sprintf(`{"name": %q, "spec": {"targets": [{"url": "http://127.0.0.1:9/{{commit}}"}]},
  "triggers": {"github": {"repository": %q, "secret": "secret-of-%s-0123456789"}}%s}`, name, repo, name, extra)
}

// TestStorageLimits: a key at its template, byte, schedule or pin limit
// is refused with a 429 naming the limit and its use, another key is not,
// a replacement counts only what it adds, and a delete or unpin frees.
func TestStorageLimits(t *testing.T) {
	env := newKeyedEnvWith(t, Config{MaxTemplates: 3, MaxTemplateBytes: 8000, MaxSchedules: 1, MaxPins: 1})
	post := func(key, body string) (*http.Response, []byte) {
		return env.do(t, key, http.MethodPost, "/v1/templates", body)
	}
	for _, n := range []string{"a", "b"} {
		if resp, b := post(env.alice, templateBody(n, "acme/"+n, "")); resp.StatusCode != 201 {
			t.Fatalf("template %s = %d %s", n, resp.StatusCode, b)
		}
	}
	sched := `, "schedule": {"cron": "0 3 * * *"}`
	if resp, b := post(env.alice, templateBody("c", "acme/c", sched)); resp.StatusCode != 201 {
		t.Fatalf("scheduled template = %d %s", resp.StatusCode, b)
	}
	resp, b := post(env.alice, templateBody("d", "acme/d", ""))
	limitProblem(t, "4th template", resp, b, "too-many-templates", 3, 3)
	if resp, b := post(env.bob, templateBody("d", "acme/d", "")); resp.StatusCode != 201 {
		t.Errorf("another key's template = %d %s, want 201", resp.StatusCode, b)
	}
	// A replacement is no new template; adding a schedule is one more.
	if resp, b := env.do(t, env.alice, http.MethodPut, "/v1/templates/a", templateBody("a", "acme/a", "")); resp.StatusCode != 200 {
		t.Errorf("replacing at the limit = %d %s, want 200", resp.StatusCode, b)
	}
	resp, b = env.do(t, env.alice, http.MethodPut, "/v1/templates/a", templateBody("a", "acme/a", sched))
	limitProblem(t, "a 2nd schedule", resp, b, "too-many-schedules", 1, 1)
	// Growing past the byte limit.
	pad := strings.Repeat("x", 2000) // the longest a default may be is 2048
	big := `, "values": {"p1": "` + pad + `", "p2": "` + pad + `", "p3": "` + pad + `", "p4": "` + pad + `"}`
	resp, b = env.do(t, env.alice, http.MethodPut, "/v1/templates/a", templateBody("a", "acme/a", big))
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "template-bytes-exceeded") || !strings.Contains(string(b), `"limit":8000`) {
		t.Errorf("growing a past 8000 bytes = %d %s, want 429 template-bytes-exceeded", resp.StatusCode, b)
	}
	// A delete frees a place.
	if resp, b := env.do(t, env.alice, http.MethodDelete, "/v1/templates/b", ""); resp.StatusCode != 204 {
		t.Fatalf("DELETE = %d %s", resp.StatusCode, b)
	}
	if resp, b := post(env.alice, templateBody("d", "acme/d", "")); resp.StatusCode != 201 {
		t.Errorf("after a delete = %d %s, want 201", resp.StatusCode, b)
	}

	// Pins.
	var ids []string
	for i := range 2 {
		resp, b := env.do(t, env.alice, http.MethodPost, "/v1/templates/a/run", fmt.Sprintf(`{"values": {"commit": "c%d"}}`, i))
		var jr JobResponse
		if resp.StatusCode != 201 || json.Unmarshal(b, &jr) != nil {
			t.Fatalf("run = %d %s", resp.StatusCode, b)
		}
		ids = append(ids, jr.ID)
	}
	if resp, b := env.do(t, env.alice, http.MethodPut, "/v1/jobs/"+ids[0]+"/pin", ""); resp.StatusCode != 200 {
		t.Fatalf("1st pin = %d %s", resp.StatusCode, b)
	}
	resp, b = env.do(t, env.alice, http.MethodPut, "/v1/jobs/"+ids[1]+"/pin", "")
	limitProblem(t, "2nd pin", resp, b, "too-many-pins", 1, 1)
	resp, b = env.do(t, env.admin, http.MethodPut, "/v1/jobs/"+ids[1]+"/pin", "")
	limitProblem(t, "an admin's pin of the key's job", resp, b, "too-many-pins", 1, 1)
	if resp, b := env.do(t, env.alice, http.MethodDelete, "/v1/jobs/"+ids[0]+"/pin", ""); resp.StatusCode != 200 {
		t.Fatalf("unpin = %d %s", resp.StatusCode, b)
	}
	if resp, b := env.do(t, env.alice, http.MethodPut, "/v1/jobs/"+ids[1]+"/pin", ""); resp.StatusCode != 200 {
		t.Errorf("pin after an unpin = %d %s, want 200", resp.StatusCode, b)
	}
}

// TestRepositoryTemplateCap: at most maxRepositoryTemplates templates,
// of every key, may trigger on one repository.
func TestRepositoryTemplateCap(t *testing.T) {
	env := newKeyedEnvWith(t, Config{MaxTemplates: 100})
	for i := range maxRepositoryTemplates {
		key := env.alice
		if i%2 == 1 {
			key = env.bob
		}
		if resp, b := env.do(t, key, http.MethodPost, "/v1/templates", templateBody(fmt.Sprintf("t%d", i), "Acme/Shop", "")); resp.StatusCode != 201 {
			t.Fatalf("template %d = %d %s", i, resp.StatusCode, b)
		}
	}
	resp, b := env.do(t, env.alice, http.MethodPost, "/v1/templates", templateBody("one-more", "acme/shop", ""))
	limitProblem(t, "one template too many for acme/shop", resp, b, "repository-templates-exceeded", maxRepositoryTemplates, maxRepositoryTemplates)
	if resp, b := env.do(t, env.alice, http.MethodPost, "/v1/templates", templateBody("one-more", "acme/other", "")); resp.StatusCode != 201 {
		t.Errorf("a template of another repository = %d %s, want 201", resp.StatusCode, b)
	}
}

func (e *keyedEnv) hook(t *testing.T, path string, h http.Header, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	return roundTrip(t, req)
}

// TestHookHardening: a body over the cap is refused before any secret is
// tried; only the templates of the repository the body names are tried;
// a GitHub delivery needs its id; a captured delivery resent, under its
// own id or another, creates no second job.
func TestHookHardening(t *testing.T) {
	env := newKeyedEnvWith(t, Config{HookMaxBody: 64 << 10})
	if resp, b := env.do(t, env.alice, http.MethodPost, "/v1/templates", templateBody("shop", "acme/shop", "")); resp.StatusCode != 201 {
		t.Fatalf("template = %d %s", resp.StatusCode, b)
	}
	if resp, b := env.do(t, env.bob, http.MethodPost, "/v1/templates", templateBody("other", "acme/other", "")); resp.StatusCode != 201 {
		t.Fatalf("template = %d %s", resp.StatusCode, b)
	}
	push := []byte(`{"ref":"refs/heads/main","after":"9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4","repository":{"full_name":"acme/shop"}}`)
	github := func(delivery, secret string, body []byte) (*http.Response, []byte) {
		h := http.Header{"X-GitHub-Event": {"push"}, "X-Hub-Signature-256": {cihook.GitHubSignature(secret, body)}}
		if delivery != "" {
			h.Set("X-GitHub-Delivery", delivery)
		}
		return env.hook(t, "/v1/hooks/github", h, body)
	}
	jobs := func() int {
		resp, b := env.do(t, env.alice, http.MethodGet, "/v1/jobs?label=template:shop", "")
		var page ListJobsResponse
		if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil {
			t.Fatalf("list = %d %s", resp.StatusCode, b)
		}
		return len(page.Jobs)
	}
	steps := []struct {
		name   string
		send   func() (*http.Response, []byte)
		status int
		slug   string
		jobs   int
	}{
		{"over the cap, signed", func() (*http.Response, []byte) {
			huge := append(bytes.Clone(push[:len(push)-1]), []byte(`,"pad":"`+strings.Repeat("x", 70<<10)+`"}`)...)
			return github("d-0", "secret-of-shop-0123456789", huge)
		}, 413, "body-too-large", 0},
		{"no delivery id", func() (*http.Response, []byte) { return github("", "secret-of-shop-0123456789", push) }, 400, "delivery-id-required", 0},
		{"signed by another repository's template", func() (*http.Response, []byte) {
			return github("d-1", "secret-of-other-0123456789", push)
		}, 401, "bad-signature", 0},
		{"signed", func() (*http.Response, []byte) { return github("d-2", "secret-of-shop-0123456789", push) }, 201, "", 1},
		{"redelivered", func() (*http.Response, []byte) { return github("d-2", "secret-of-shop-0123456789", push) }, 200, "", 1},
		{"replayed under a new id", func() (*http.Response, []byte) { return github("d-3", "secret-of-shop-0123456789", push) }, 200, "", 1},
	}
	for _, st := range steps {
		resp, b := st.send()
		if resp.StatusCode != st.status || st.slug != "" && !strings.Contains(string(b), problemBase+st.slug) {
			t.Errorf("%s: %d %s, want %d %s", st.name, resp.StatusCode, b, st.status, st.slug)
		}
		if st.status == 200 && !strings.Contains(string(b), `"replayed":true`) {
			t.Errorf("%s: %s, want the first job, replayed", st.name, b)
		}
		if n := jobs(); n != st.jobs {
			t.Errorf("%s: %d jobs, want %d", st.name, n, st.jobs)
		}
	}
}
