package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/cihook"
	"github.com/benchq/benchq/internal/testservers"
)

// TestCIHooksEndToEnd drives the all-in-one on a real redis-server with
// CI deliveries: a signed GitHub push (and a GitLab push with its token)
// creates exactly one job labelled with its commit, which runs against a
// loopback target; the same delivery again creates none; a bad signature
// or token is a 401 and creates none.
func TestCIHooksEndToEnd(t *testing.T) {
	m := startOnRedis(t)
	base := m.URL()
	tg := testservers.StartTarget(t, "hello", 0)
	const ghSecret, glToken = "gh-secret-for-the-e2e-test", "gl-token-for-the-e2e-test"
	tmpl := map[string]any{
		"name":   "shop-main",
		"values": map[string]string{"target_url": tg.URL},
		"spec": map[string]any{
			"targets": []map[string]any{{"name": "shop", "url": "{{target_url}}?rev={{commit}}"}},
			"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{20}},
		},
		"triggers": map[string]any{
			"github": map[string]any{"repository": "acme/shop", "branches": []string{"main"}, "secret": ghSecret},
			"gitlab": map[string]any{"project": "acme/shop", "token": glToken},
		},
	}
	body, _ := json.Marshal(tmpl)
	if resp, b := call(t, http.MethodPost, base+"/v1/templates", body); resp.StatusCode != http.StatusCreated || strings.Contains(string(b), ghSecret) {
		t.Fatalf("POST /v1/templates = %d %s, want 201 without the secret", resp.StatusCode, b)
	}

	sha := "9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4"
	push := []byte(`{"ref":"refs/heads/main","after":"` + sha + `","repository":{"full_name":"acme/shop"}}`)
	github := func(delivery, sig string, payload []byte) (int, []byte) {
		h := http.Header{"X-GitHub-Event": {"push"}, "X-GitHub-Delivery": {delivery}, "X-Hub-Signature-256": {sig}}
		return hook(t, base+"/v1/hooks/github", h, payload)
	}
	gitlab := func(uuid, token string, payload []byte) (int, []byte) {
		h := http.Header{"X-Gitlab-Event": {"Push Hook"}, "X-Gitlab-Event-UUID": {uuid}, "X-Gitlab-Token": {token}}
		return hook(t, base+"/v1/hooks/gitlab", h, payload)
	}
	glSHA := "1111111111222222222233333333334444444444"
	glPush := []byte(`{"ref":"refs/heads/main","after":"` + glSHA + `","project":{"path_with_namespace":"acme/shop"}}`)

	steps := []struct {
		name    string
		send    func() (int, []byte)
		status  int
		commits map[string]int // jobs per commit label after the step
	}{
		{"github: signed push", func() (int, []byte) { return github("d-1", cihook.GitHubSignature(ghSecret, push), push) }, 201, map[string]int{sha: 1}},
		{"github: replay", func() (int, []byte) { return github("d-1", cihook.GitHubSignature(ghSecret, push), push) }, 200, map[string]int{sha: 1}},
		{"github: bad signature", func() (int, []byte) {
			return github("d-2", cihook.GitHubSignature("wrong-secret-0123456789", push), push)
		}, 401, map[string]int{sha: 1}},
		{"github: no signature", func() (int, []byte) { return github("d-3", "", push) }, 401, map[string]int{sha: 1}},
		{"github: branch deleted", func() (int, []byte) {
			del := []byte(`{"ref":"refs/heads/main","after":"0000000000000000000000000000000000000000","deleted":true,"repository":{"full_name":"acme/shop"}}`)
			return github("d-4", cihook.GitHubSignature(ghSecret, del), del)
		}, 202, map[string]int{sha: 1}},
		{"github: other branch", func() (int, []byte) {
			other := bytes.Replace(push, []byte("refs/heads/main"), []byte("refs/heads/feature"), 1)
			return github("d-5", cihook.GitHubSignature(ghSecret, other), other)
		}, 202, map[string]int{sha: 1}},
		{"gitlab: push with token", func() (int, []byte) { return gitlab("u-1", glToken, glPush) }, 201, map[string]int{sha: 1, glSHA: 1}},
		{"gitlab: replay", func() (int, []byte) { return gitlab("u-1", glToken, glPush) }, 200, map[string]int{sha: 1, glSHA: 1}},
		{"gitlab: bad token", func() (int, []byte) { return gitlab("u-2", "gl-token-for-the-e2e-tesT", glPush) }, 401, map[string]int{sha: 1, glSHA: 1}},
	}
	for _, st := range steps {
		code, b := st.send()
		if code != st.status {
			t.Fatalf("%s: HTTP %d %s, want %d", st.name, code, b, st.status)
		}
		for commit, want := range st.commits {
			if got := jobsLabelled(t, base, "commit:"+commit); len(got) != want {
				t.Fatalf("%s: %d jobs with commit %s, want %d", st.name, len(got), commit, want)
			}
		}
		if total := len(jobsLabelled(t, base, "template:shop-main")); total != len(st.commits) {
			t.Fatalf("%s: %d jobs of the template, want %d", st.name, total, len(st.commits))
		}
	}
	j := jobsLabelled(t, base, "commit:"+sha)[0]
	if got := waitJob(t, base, j.ID, 60*time.Second); got.Status != "succeeded" {
		t.Fatalf("the pushed commit's job ended %s (%s), want succeeded", got.Status, got.Error)
	}
	if tg.Hits() < 20 {
		t.Errorf("target got %d requests, want at least 20", tg.Hits())
	}
	// Each job reports back to the forge whose delivery started it.
	for commit, want := range map[string]string{
		sha:   `"notify":{"github":{"repository":"acme/shop","sha":"` + sha + `"}}`,
		glSHA: `"notify":{"gitlab":{"project":"acme/shop","sha":"` + glSHA + `"}}`,
	} {
		id := jobsLabelled(t, base, "commit:"+commit)[0].ID
		if _, b := call(t, http.MethodGet, base+"/v1/jobs/"+id, nil); !strings.Contains(string(b), want) {
			t.Errorf("job of commit %s lacks %s: %s", commit, want, b)
		}
	}
	resp, b := call(t, http.MethodGet, base+"/metrics", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `benchq_hook_rejected_total{provider="github",reason="signature"} 2`) ||
		!strings.Contains(string(b), `benchq_hook_rejected_total{provider="gitlab",reason="signature"} 1`) {
		t.Errorf("metrics do not count the refused deliveries:\n%s", grepLines(string(b), "benchq_hook"))
	}
}

func hook(t *testing.T, url string, h http.Header, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes()
}

// jobsLabelled lists the jobs with label ("key:value").
func jobsLabelled(t *testing.T, base, label string) []apiJob {
	t.Helper()
	resp, b := call(t, http.MethodGet, base+"/v1/jobs?limit=100&label="+label, nil)
	var page struct {
		Jobs []apiJob `json:"jobs"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil {
		t.Fatalf("GET /v1/jobs?label=%s = %d %s", label, resp.StatusCode, b)
	}
	return page.Jobs
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
