package forge

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/secrettest"
	"github.com/benchq/benchq/internal/webhook"
)

// fakeGitLab serves the four requests of GitLab's REST API (v4) benchq
// makes, as GitLab documents them: commit statuses, and a merge
// request's notes listed, created and updated. Anything else, or a
// request without the token, is refused and noted.
type fakeGitLab struct {
	srv   *httptest.Server
	token string

	mu       sync.Mutex
	statuses []url.Values // each status's parameters
	notes    []fakeNote
	fail     []int // status codes to answer next, in order
	problems []string
}

type fakeNote struct {
	ID   int    `json:"id"`
	Body string `json:"body"`
}

var (
	glStatusPath = regexp.MustCompile(`^/api/v4/projects/acme%2Fplatform%2Fshop/statuses/([0-9a-f]{40})$`)
	glNotesPath  = regexp.MustCompile(`^/api/v4/projects/acme%2Fplatform%2Fshop/merge_requests/7/notes(/(\d+))?$`)
)

func startGitLab(t *testing.T) (*fakeGitLab, *Client) {
	t.Helper()
	g := &fakeGitLab{token: secrettest.Random(t, "glpat-")}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	t.Cleanup(func() {
		for _, p := range g.problems {
			t.Errorf("the fake GitLab refused: %s", p)
		}
	})
	c, err := New(Config{GitLabURL: g.srv.URL + "/api/v4", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return g, c
}

func (g *fakeGitLab) refuse(w http.ResponseWriter, r *http.Request, why string) {
	g.problems = append(g.problems, r.Method+" "+r.URL.EscapedPath()+": "+why)
	http.Error(w, `{"message":"`+why+`"}`, http.StatusBadRequest)
}

func (g *fakeGitLab) serve(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.Header.Get("PRIVATE-TOKEN") != g.token {
		http.Error(w, `{"message":"401 Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	if len(g.fail) > 0 {
		code := g.fail[0]
		g.fail = g.fail[1:]
		w.Header().Set("Retry-After", "3")
		http.Error(w, `{"message":"busy"}`, code)
		return
	}
	params, err := readParams(r)
	if err != nil {
		g.refuse(w, r, err.Error())
		return
	}
	path := r.URL.EscapedPath()
	w.Header().Set("Content-Type", "application/json")
	switch m := glNotesPath.FindStringSubmatch(path); {
	case r.Method == http.MethodPost && glStatusPath.MatchString(path):
		switch params.Get("state") {
		case "pending", "running", "success", "failed", "canceled":
		default:
			g.refuse(w, r, "state "+params.Get("state"))
			return
		}
		if params.Get("name") == "" {
			g.refuse(w, r, "no name")
			return
		}
		g.statuses = append(g.statuses, params)
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":%d,"sha":%q,"status":%q,"name":%q}`, len(g.statuses), glStatusPath.FindStringSubmatch(path)[1], params.Get("state"), params.Get("name"))
	case m != nil && r.Method == http.MethodGet && m[2] == "":
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		per, page = max(per, 20), max(page, 1)
		from, to := min((page-1)*per, len(g.notes)), min(page*per, len(g.notes))
		if to < len(g.notes) {
			w.Header().Set("X-Next-Page", strconv.Itoa(page+1))
		}
		_ = json.NewEncoder(w).Encode(g.notes[from:to])
	case m != nil && r.Method == http.MethodPost && m[2] == "":
		if params.Get("body") == "" {
			g.refuse(w, r, "no body")
			return
		}
		g.notes = append(g.notes, fakeNote{ID: 500 + len(g.notes), Body: params.Get("body")})
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(g.notes[len(g.notes)-1])
	case m != nil && r.Method == http.MethodPut && m[2] != "":
		id, _ := strconv.Atoi(m[2])
		for i := range g.notes {
			if g.notes[i].ID == id {
				g.notes[i].Body = params.Get("body")
				_ = json.NewEncoder(w).Encode(g.notes[i])
				return
			}
		}
		http.Error(w, `{"message":"404 Not found"}`, http.StatusNotFound)
	default:
		g.refuse(w, r, "no such request")
	}
}

// readParams reads a request's parameters as GitLab takes them: a JSON
// or form body, or the query.
func readParams(r *http.Request) (url.Values, error) {
	out := r.URL.Query()
	body, _ := io.ReadAll(r.Body)
	if len(body) == 0 {
		return out, nil
	}
	switch ct := r.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, err
		}
		for k, v := range m {
			out.Set(k, fmt.Sprint(v))
		}
	case strings.HasPrefix(ct, "application/x-www-form-urlencoded"):
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		for k, v := range q {
			out[k] = v
		}
	default:
		return nil, fmt.Errorf("body of content type %q", ct)
	}
	return out, nil
}

func gitlabMessage(state State) Message {
	return Message{Forge: job.ForgeGitLab, Repository: "acme/platform/shop", SHA: sha,
		Status: &Status{State: state, Context: "benchq/checkout", Description: "running", TargetURL: "http://127.0.0.1:8080/ui/jobs/J"}}
}

func TestGitLabStatusesAndNote(t *testing.T) {
	g, c := startGitLab(t)
	for _, st := range []State{StatePending, StateSuccess, StateFailure, StateError} {
		if a := c.Send(t.Context(), gitlabMessage(st), g.token); a.Outcome != webhook.OutcomeDelivered {
			t.Fatalf("Send(status %s) = %+v, want delivered", st, a)
		}
	}
	var states []string
	for _, s := range g.statuses {
		states = append(states, s.Get("state"))
		if s.Get("name") != "benchq/checkout" || s.Get("target_url") != "http://127.0.0.1:8080/ui/jobs/J" {
			t.Errorf("status %v, want name and target_url", s)
		}
	}
	if got := strings.Join(states, ","); got != "running,success,failed,failed" {
		t.Errorf("GitLab states = %s, want running,success,failed,failed", got)
	}
	for i := range 30 { // more than the first page
		g.notes = append(g.notes, fakeNote{ID: i + 1, Body: "a reviewer's note"})
	}
	for i, want := range []string{"created", "updated"} {
		m := commentMessage(fmt.Sprintf("01J00000000000000000000%03d", i), "d"+strconv.Itoa(i), job.CommentAlways)
		m.Forge, m.Repository, m.Request = job.ForgeGitLab, "acme/platform/shop", 7
		if a := c.Send(t.Context(), m, g.token); a.Outcome != webhook.OutcomeDelivered || !strings.Contains(a.Response, want) {
			t.Fatalf("Send(note %d) = %+v, want delivered, %s", i, a, want)
		}
	}
	if n := len(g.notes); n != 31 || !strings.Contains(g.notes[30].Body, "01J00000000000000000000001") {
		t.Errorf("%d notes, last %q; want benchq's one note updated after the 30 others", n, g.notes[n-1].Body)
	}
	g.fail = []int{http.StatusServiceUnavailable}
	if a := c.Send(t.Context(), gitlabMessage(StatePending), g.token); a.Outcome != webhook.OutcomeRetry || a.RetryAfterMs != 3000 {
		t.Errorf("Send after a 503 with Retry-After: 3 = %+v, want retry in 3s", a)
	}
	if a := c.Send(t.Context(), gitlabMessage(StatePending), "wrong-token"); a.Outcome != webhook.OutcomeRejected || a.StatusCode != http.StatusUnauthorized {
		t.Errorf("Send with a wrong token = %+v, want rejected with 401", a)
	}
	if want := g.srv.URL + "/api/v4/projects/acme%2Fplatform%2Fshop/statuses/" + sha; c.Endpoint(gitlabMessage(StatePending)) != want {
		t.Errorf("Endpoint = %q, want %q", c.Endpoint(gitlabMessage(StatePending)), want)
	}
}
