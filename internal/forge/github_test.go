package forge

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/secrettest"
	"github.com/benchq/benchq/internal/testservers/githubapi"
	"github.com/benchq/benchq/internal/webhook"
)

const sha = "9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4"

// startGitHub starts a loopback GitHub under prefix and a client for it.
func startGitHub(t *testing.T, prefix string) (*githubapi.Server, *Client, string) {
	t.Helper()
	token := secrettest.Random(t, "ghp_")
	gh := githubapi.Start(t, token, prefix)
	c, err := New(Config{GitHubURL: gh.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range gh.Problems() {
			t.Errorf("the loopback GitHub refused: %s", p)
		}
	})
	return gh, c, token
}

func statusMessage(state State) Message {
	return Message{Forge: job.ForgeGitHub, Repository: "acme/shop", SHA: sha,
		Status: &Status{State: state, Context: "benchq/checkout", Description: "benchmark running", TargetURL: "http://127.0.0.1:8080/ui/jobs/J"}}
}

func commentMessage(jobID, digest string, mode job.CommentMode) Message {
	c := Comment{Mode: mode, Marker: Marker("benchq/checkout"), JobID: jobID, Digest: digest}
	c.Body = c.Marker + "\nresult of " + jobID + "\n" + resultLine(jobID, digest) + "\n"
	return Message{Forge: job.ForgeGitHub, Repository: "acme/shop", SHA: sha, Request: 12, Comment: &c}
}

// TestGitHubStatuses: each state is set on the commit as sent, on
// github.com's layout and on GitHub Enterprise Server's /api/v3.
func TestGitHubStatuses(t *testing.T) {
	for _, prefix := range []string{"", "/api/v3"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			gh, c, token := startGitHub(t, prefix)
			for _, st := range []State{StatePending, StateSuccess, StateFailure, StateError} {
				a := c.Send(t.Context(), statusMessage(st), token)
				if a.Outcome != webhook.OutcomeDelivered || a.StatusCode != http.StatusCreated || a.Error != "" {
					t.Fatalf("Send(status %s) = %+v, want delivered with 201", st, a)
				}
			}
			got := gh.Statuses("acme/shop", sha)
			if len(got) != 4 || got[0].State != "pending" || got[3].State != "error" || got[1].Context != "benchq/checkout" || got[2].TargetURL != "http://127.0.0.1:8080/ui/jobs/J" {
				t.Errorf("statuses = %+v, want pending, success, failure, error with context and link", got)
			}
			if want := c.Endpoint(statusMessage(StatePending)); want != gh.URL+"repos/acme/shop/statuses/"+sha {
				t.Errorf("Endpoint = %q", want)
			}
		})
	}
}

// TestGitHubOneCommentPerContext: the first job creates the comment; a
// later one updates it in place, found by its marker past a page of
// other comments; an older job's late retry, an unchanged on_change
// result and a comment mode of another context behave as documented.
func TestGitHubOneCommentPerContext(t *testing.T) {
	gh, c, token := startGitHub(t, "")
	for i := range 120 { // more than a page of 100: the marker is found on page 2
		gh.AddComment("acme/shop", 12, "reviewer", "looks good "+strconv.Itoa(i))
	}
	steps := []struct {
		name string
		msg  Message
		want string // in the attempt's response
		job  string // the job the comment shows after the step
	}{
		{"first job creates", commentMessage("01J000000000000000000000A1", "d1", job.CommentAlways), "created", "01J000000000000000000000A1"},
		{"later job updates", commentMessage("01J000000000000000000000B2", "d2", job.CommentAlways), "updated", "01J000000000000000000000B2"},
		{"older job's retry leaves it", commentMessage("01J000000000000000000000A1", "d1", job.CommentAlways), "newer than this one", "01J000000000000000000000B2"},
		{"on_change, same result", commentMessage("01J000000000000000000000C3", "d2", job.CommentOnChange), "unchanged", "01J000000000000000000000B2"},
		{"on_change, new result", commentMessage("01J000000000000000000000D4", "d4", job.CommentOnChange), "updated", "01J000000000000000000000D4"},
	}
	for _, st := range steps {
		a := c.Send(t.Context(), st.msg, token)
		if a.Outcome != webhook.OutcomeDelivered || !strings.Contains(a.Response, st.want) {
			t.Fatalf("%s: Send = %+v, want delivered, %q", st.name, a, st.want)
		}
		var ours []githubapi.Comment
		for _, cm := range gh.Comments("acme/shop", 12) {
			if cm.User == gh.User {
				ours = append(ours, cm)
			}
		}
		if len(ours) != 1 || !strings.Contains(ours[0].Body, "result of "+st.job) {
			t.Fatalf("%s: benchq's comments = %+v, want one showing %s", st.name, ours, st.job)
		}
	}
	if n := len(gh.Comments("acme/shop", 12)); n != 121 {
		t.Errorf("%d comments in all, want the 120 others and benchq's one", n)
	}
}

// TestGitHubFailures: what the forge answers decides retry or not, the
// wait it asks for is kept, and no attempt carries the token.
func TestGitHubFailures(t *testing.T) {
	reset := strconv.FormatInt(time.Now().Add(90*time.Second).Unix(), 10)
	tests := []struct {
		name    string
		code    int
		header  http.Header
		outcome webhook.Outcome
		minWait time.Duration
		maxWait time.Duration
	}{
		{"502", http.StatusBadGateway, nil, webhook.OutcomeRetry, 0, 0},
		{"503 with Retry-After", http.StatusServiceUnavailable, http.Header{"Retry-After": {"7"}}, webhook.OutcomeRetry, 7 * time.Second, 7 * time.Second},
		{"429 with Retry-After", http.StatusTooManyRequests, http.Header{"Retry-After": {"30"}}, webhook.OutcomeRetry, 30 * time.Second, 30 * time.Second},
		{"primary rate limit", http.StatusForbidden, http.Header{"X-RateLimit-Remaining": {"0"}, "X-RateLimit-Reset": {reset}, "X-RateLimit-Limit": {"5000"}},
			webhook.OutcomeRetry, 80 * time.Second, 91 * time.Second},
		{"401", http.StatusUnauthorized, nil, webhook.OutcomeRejected, 0, 0},
		{"404", http.StatusNotFound, nil, webhook.OutcomeRejected, 0, 0},
		{"422", http.StatusUnprocessableEntity, nil, webhook.OutcomeRejected, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gh, c, token := startGitHub(t, "")
			gh.Fail("POST", "", tt.code, 1, tt.header)
			a := c.Send(t.Context(), statusMessage(StatePending), token)
			wait := time.Duration(a.RetryAfterMs) * time.Millisecond
			if a.Outcome != tt.outcome || a.StatusCode != tt.code || wait < tt.minWait || wait > tt.maxWait || a.Error == "" {
				t.Errorf("Send = %+v, want %s with status %d and a wait of %v..%v", a, tt.outcome, tt.code, tt.minWait, tt.maxWait)
			}
			if leaks := secrettest.Leaks(a.Error+a.Response, token); len(leaks) > 0 {
				t.Errorf("the attempt shows the token: %+v", a)
			}
			// The next attempt goes through.
			if a := c.Send(t.Context(), statusMessage(StatePending), token); a.Outcome != webhook.OutcomeDelivered {
				t.Errorf("Send after the failure = %+v, want delivered", a)
			}
		})
	}
}

// TestGitHubTokens: without a token nothing is sent and the attempt says
// what to set; a wrong token is rejected, not retried.
func TestGitHubTokens(t *testing.T) {
	gh, c, _ := startGitHub(t, "")
	a := c.Send(t.Context(), statusMessage(StatePending), "")
	if a.Outcome != webhook.OutcomeRejected || !strings.Contains(a.Error, "BENCHQ_GITHUB_TOKEN") || len(gh.Requests()) != 0 {
		t.Errorf("Send without a token = %+v after %d requests, want rejected naming BENCHQ_GITHUB_TOKEN, nothing sent", a, len(gh.Requests()))
	}
	wrong := secrettest.Random(t, "ghp_")
	a = c.Send(t.Context(), statusMessage(StatePending), wrong)
	if a.Outcome != webhook.OutcomeRejected || a.StatusCode != http.StatusUnauthorized || !strings.Contains(a.Error, "token was refused") {
		t.Errorf("Send with a wrong token = %+v, want rejected with 401", a)
	}
	if leaks := secrettest.Leaks(a.Error+a.Response, wrong); len(leaks) > 0 {
		t.Errorf("the attempt shows the token: %+v", a)
	}
}
