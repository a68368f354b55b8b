package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/cihook"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/secrettest"
	"github.com/benchq/benchq/internal/testservers/githubapi"
)

// TestForgeStatusAndCommentEndToEnd is the whole path of a job's notify
// on real redis-server, API and worker, against a loopback GitHub that
// checks every request (and answer) against GitHub's published OpenAPI
// description: a signed pull_request delivery runs a template, whose job
// sets its commit's status pending then success and writes one comment;
// the comment's first request is answered 502 and the next delivers; a
// second delivery for the same pull request (a new head commit, which the
// target answers with 500s) sets that commit pending then failure and
// updates the same comment, after a 429 whose Retry-After it waits out.
// The template's token and the service's never show in the log, in the
// API's answers or in the delivery log.
func TestForgeStatusAndCommentEndToEnd(t *testing.T) {
	rs := redistest.Start(t)
	token, serviceToken := secrettest.Random(t, "ghp_"), secrettest.Random(t, "ghp_")
	const secret = "gh-secret-for-the-forge-test"
	gh := githubapi.Start(t, token, "")
	good, bad := strings.Repeat("a1", 20), strings.Repeat("b2", 20)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, bad) {
			w.WriteHeader(http.StatusInternalServerError)
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(target.Close)

	logs := newLineWatcher()
	log := slog.New(slog.NewTextHandler(io.MultiWriter(logs, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := startMainLogged(t, func(c *config.Config) {
		c.RedisURL = rs.URL()
		c.GitHubAPIURL = gh.URL
		c.GitHubToken = config.Secret(serviceToken) // the template's own token wins
		c.WebhookBackoff = []time.Duration{200 * time.Millisecond, 200 * time.Millisecond, 200 * time.Millisecond}
	}, nil, log)
	base := m.URL()

	tmpl := map[string]any{
		"name":   "shop-main",
		"values": map[string]string{"target_url": target.URL},
		"spec": map[string]any{
			"targets": []map[string]any{{"name": "shop", "url": "{{target_url}}/?rev={{commit}}"}},
			"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{50}},
		},
		"triggers": map[string]any{"github": map[string]any{"repository": "acme/shop", "secret": secret, "api_token": token}},
	}
	body, _ := json.Marshal(tmpl)
	if resp, b := call(t, http.MethodPost, base+"/v1/templates", body); resp.StatusCode != http.StatusCreated || strings.Contains(string(b), token) {
		t.Fatalf("POST /v1/templates = %d %s, want 201 without the token", resp.StatusCode, b)
	}
	if _, b := call(t, http.MethodGet, base+"/v1/templates/shop-main", nil); strings.Contains(string(b), token) || !strings.Contains(string(b), `"api_token":"[redacted]"`) {
		t.Errorf("GET /v1/templates/shop-main shows the token, or no redacted one: %s", b)
	}

	pullRequest := func(delivery, action, head string) string {
		t.Helper()
		p := []byte(`{"action":"` + action + `","number":12,"pull_request":{"head":{"sha":"` + head + `","ref":"feature"},"base":{"ref":"main"}},"repository":{"full_name":"acme/shop"}}`)
		h := http.Header{"X-GitHub-Event": {"pull_request"}, "X-GitHub-Delivery": {delivery}, "X-Hub-Signature-256": {cihook.GitHubSignature(secret, p)}}
		code, b := hook(t, base+"/v1/hooks/github", h, p)
		var resp struct {
			Jobs []struct {
				JobID string `json:"job_id"`
			} `json:"jobs"`
		}
		if code != http.StatusCreated || json.Unmarshal(b, &resp) != nil || len(resp.Jobs) != 1 {
			t.Fatalf("pull_request delivery = %d %s, want 201 with one job", code, b)
		}
		return resp.Jobs[0].JobID
	}

	// The first job: its comment's creation is answered 502 once.
	gh.Fail(http.MethodPost, "/issues/12/comments", http.StatusBadGateway, 1, nil)
	first := pullRequest("d-1", "opened", good)
	if j := waitJob(t, base, first, time.Minute); j.Status != "succeeded" || j.Verdict == "fail" {
		t.Fatalf("first job = %+v, want succeeded without a failing verdict", j)
	}
	if _, b := call(t, http.MethodGet, base+"/v1/jobs/"+first, nil); !strings.Contains(string(b), `"notify":{"github":{"repository":"acme/shop","sha":"`+good+`","pr":12}}`) {
		t.Errorf("the triggered job does not carry the event's notify: %s", b)
	}
	d1 := waitDeliveries(t, base, first, 3)
	checkStatuses(t, gh.Statuses("acme/shop", good), "success", first)
	comment := d1["github.comment"]
	if comment.Status != "delivered" || len(comment.Attempts) != 2 || comment.Attempts[0].StatusCode != http.StatusBadGateway ||
		comment.Attempts[0].Outcome != "retry" || comment.Attempts[1].Outcome != "delivered" || !strings.Contains(comment.Attempts[1].Response, "created") {
		t.Errorf("comment delivery = %+v, want a 502 retried, then created", comment)
	}
	ours := benchqComments(gh)
	if len(ours) != 1 || !strings.Contains(ours[0].Body, "<!-- benchq:benchq/shop-main -->") || !strings.Contains(ours[0].Body, first) {
		t.Fatalf("comments = %+v, want one marked benchq/shop-main showing job %s", ours, first)
	}
	commentID := ours[0].ID

	// The second job, for a new head of the same pull request, fails its
	// verdict; its comment update is answered 429 with Retry-After: 1.
	gh.Fail(http.MethodPatch, "/issues/comments/", http.StatusTooManyRequests, 1, http.Header{"Retry-After": {"1"}})
	second := pullRequest("d-2", "synchronize", bad)
	if j := waitJob(t, base, second, time.Minute); j.Status != "succeeded" || j.Verdict != "fail" {
		t.Fatalf("second job = %+v, want succeeded with verdict fail (its target answers 500)", j)
	}
	d2 := waitDeliveries(t, base, second, 3)
	checkStatuses(t, gh.Statuses("acme/shop", bad), "failure", second)
	update := d2["github.comment"]
	if update.Status != "delivered" || len(update.Attempts) != 2 || update.Attempts[0].StatusCode != http.StatusTooManyRequests ||
		update.Attempts[0].RetryAfterMs != 1000 || !strings.Contains(update.Attempts[1].Response, "updated") {
		t.Fatalf("comment delivery = %+v, want a 429 asking for 1 s, then updated", update)
	}
	if gap := update.Attempts[1].At.Sub(update.Attempts[0].At); gap < time.Second {
		t.Errorf("the retry came %v after the 429, want at least its Retry-After of 1s", gap)
	} else {
		t.Logf("retry after the 429's Retry-After: 1: %v", gap)
	}
	ours = benchqComments(gh)
	if len(ours) != 1 || ours[0].ID != commentID || !strings.Contains(ours[0].Body, second) || !strings.Contains(ours[0].Body, "verdict fail") {
		t.Errorf("comments = %+v, want comment %d alone, now showing job %s failing", ours, commentID, second)
	}
	if s := gh.Statuses("acme/shop", good); len(s) != 2 {
		t.Errorf("the first commit's statuses changed: %+v", s)
	}

	for _, p := range gh.Problems() {
		t.Errorf("the loopback GitHub refused: %s", p)
	}
	t.Logf("%d requests to the loopback GitHub, each checked against its OpenAPI description", len(gh.Requests()))
	_, b1 := call(t, http.MethodGet, base+"/v1/jobs/"+first+"/deliveries", nil)
	_, b2 := call(t, http.MethodGet, base+"/v1/jobs/"+second, nil)
	if leaks := secrettest.Leaks(logs.String()+string(b1)+string(b2), token, serviceToken); len(leaks) > 0 {
		t.Errorf("a token shows in the log or the API's answers")
	}
}

// checkStatuses wants pending, then final, on a commit, both linking job id.
func checkStatuses(t *testing.T, got []githubapi.Status, final, id string) {
	t.Helper()
	if len(got) != 2 || got[0].State != "pending" || got[1].State != final {
		t.Fatalf("statuses = %+v, want pending then %s", got, final)
	}
	for _, s := range got {
		if s.Context != "benchq/shop-main" || !strings.HasSuffix(s.TargetURL, "/ui/jobs/"+id) {
			t.Errorf("status %+v, want context benchq/shop-main linking job %s", s, id)
		}
	}
}

func benchqComments(gh *githubapi.Server) []githubapi.Comment {
	var out []githubapi.Comment
	for _, c := range gh.Comments("acme/shop", 12) {
		if c.User == gh.User {
			out = append(out, c)
		}
	}
	return out
}

// deliveryLog is what the test reads of a job's delivery log.
type deliveryLog struct {
	Event    string `json:"event"`
	Status   string `json:"status"`
	Attempts []struct {
		At           time.Time `json:"at"`
		StatusCode   int       `json:"status_code"`
		Outcome      string    `json:"outcome"`
		Response     string    `json:"response"`
		RetryAfterMs int64     `json:"retry_after_ms"`
	} `json:"attempts"`
}

// waitDeliveries waits until job id has n deliveries, none in flight, and
// returns them by event.
func waitDeliveries(t *testing.T, base, id string, n int) map[string]deliveryLog {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+id+"/deliveries", nil)
		var page struct {
			Deliveries []deliveryLog `json:"deliveries"`
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &page) != nil {
			t.Fatalf("GET deliveries = %d %s", resp.StatusCode, b)
		}
		byEvent, settled := map[string]deliveryLog{}, len(page.Deliveries) == n
		for _, d := range page.Deliveries {
			byEvent[d.Event] = d
			settled = settled && d.Status != "pending" && d.Status != "retrying"
		}
		if settled {
			return byEvent
		}
		if time.Now().After(deadline) {
			t.Fatalf("deliveries of job %s not settled after 30s: %s", id, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
