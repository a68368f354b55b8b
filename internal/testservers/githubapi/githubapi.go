// Package githubapi is a loopback GitHub REST API for tests: the commit
// status and issue comment operations benchq's forge client calls, each
// request checked against GitHub's published OpenAPI description (the
// subset in testdata/, see its README) before it is served, and each
// answer checked against the same description before it is sent. What a
// test asserts on is what a real GitHub would have been asked, not what
// a hand-written expectation assumed.
package githubapi

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

//go:embed testdata/api.github.com.subset.json
var description []byte

// Status is one commit status as set.
type Status struct {
	State, Context, Description, TargetURL string
}

// Comment is one issue comment.
type Comment struct {
	ID      int64
	Body    string
	User    string
	Created time.Time
	Updated time.Time
}

// Request is one request as served.
type Request struct {
	Method, Path string
	// Status is the answer's status code.
	Status int
}

// failure is a canned answer for the next requests of a method to a
// path.
type failure struct {
	method, path string
	code         int
	header       http.Header
	left         int
}

// Server is the loopback API. Its zero value is not usable; Start one.
type Server struct {
	// URL is the API's base URL, with a trailing slash.
	URL string
	// Token is the one token it accepts, as "Bearer <token>".
	Token string
	// User is the login that owns the comments the token writes.
	User string

	router routers.Router

	mu       sync.Mutex
	statuses map[string][]Status   // "owner/repo@sha"
	comments map[string][]*Comment // "owner/repo#number"
	byID     map[int64]*Comment    // every comment
	issueOf  map[int64]string      // comment id -> "owner/repo#number"
	failures []*failure            //
	log      []Request             //
	problems []string              // requests or answers the description refused
	nextID   int64
}

// Start starts the API on 127.0.0.1, accepting token, under the path
// prefix ("" or, as GitHub Enterprise Server's, "/api/v3"); it stops
// when the test ends.
func Start(t testing.TB, token, prefix string) *Server {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(description)
	if err != nil {
		t.Fatalf("githubapi: load the description: %v", err)
	}
	s := &Server{Token: token, User: "benchq-bot", statuses: map[string][]Status{}, comments: map[string][]*Comment{},
		byID: map[int64]*Comment{}, issueOf: map[int64]string{}, nextID: 1000}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	base := srv.URL + strings.TrimSuffix(prefix, "/")
	doc.Servers = openapi3.Servers{{URL: base}}
	if s.router, err = gorillamux.NewRouter(doc); err != nil {
		t.Fatalf("githubapi: route the description: %v", err)
	}
	s.URL = base + "/"
	return s
}

// Fail answers the next n requests of method (GET, POST, PATCH; "" for
// any) whose path contains path ("" for any) with code and header, after
// checking them as any other.
func (s *Server) Fail(method, path string, code, n int, header http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, &failure{method: method, path: path, code: code, header: header, left: n})
}

// AddComment adds a comment by user to issue number of repo, as another
// participant of the pull request would write it.
func (s *Server) AddComment(repo string, number int, user, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addComment(repo+"#"+strconv.Itoa(number), user, body).ID
}

// Statuses are the statuses set on repo's commit sha, oldest first.
func (s *Server) Statuses(repo, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.statuses[repo+"@"+sha])
}

// Comments are the comments of issue number of repo, oldest first.
func (s *Server) Comments(repo string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments[repo+"#"+strconv.Itoa(number)] {
		out = append(out, *c)
	}
	return out
}

// Requests are the requests served, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Problems are the requests the description refused, and the answers it
// would have refused, each with why. A test wants none.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.problems)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := s.router.FindRoute(r)
	if err != nil {
		s.answer(w, r, nil, http.StatusNotFound, nil, s.refuse(r, "no operation of the description: "+err.Error()))
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		s.answer(w, r, in, http.StatusUnprocessableEntity, nil, s.refuse(r, err.Error()))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if problem := checkHeaders(r); problem != "" {
		s.answer(w, r, in, http.StatusBadRequest, nil, s.refuse(r, problem))
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		s.answer(w, r, in, http.StatusUnauthorized, nil, errorBody("Bad credentials"))
		return
	}
	if code, h, ok := s.canned(r.Method, r.URL.Path); ok {
		s.answer(w, r, in, code, h, errorBody(http.StatusText(code)))
		return
	}
	code, out := s.operate(route.Operation.OperationID, params, r, body)
	var h http.Header
	if l := s.link(route.Operation.OperationID, params, r); l != "" {
		h = http.Header{"Link": {l}}
	}
	s.answer(w, r, in, code, h, out)
}

// checkHeaders checks what the description leaves to GitHub's docs: a
// User-Agent (GitHub refuses a request without one), an Accept that
// takes JSON or one of GitHub's media types, and a body sent as JSON.
func checkHeaders(r *http.Request) string {
	if r.Header.Get("User-Agent") == "" {
		return "no User-Agent header"
	}
	if a := r.Header.Get("Accept"); a != "" && !strings.Contains(a, "json") && !strings.Contains(a, "*/*") && !strings.Contains(a, "application/vnd.github") {
		return "Accept " + a + " takes no JSON"
	}
	if r.ContentLength != 0 && !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return "a body of Content-Type " + r.Header.Get("Content-Type")
	}
	return ""
}

func (s *Server) refuse(r *http.Request, why string) any {
	s.mu.Lock()
	s.problems = append(s.problems, r.Method+" "+r.URL.RequestURI()+": "+why)
	s.mu.Unlock()
	return errorBody("Validation Failed: " + why)
}

func errorBody(msg string) map[string]any {
	return map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
}

// canned takes the next canned failure for method and path, if one is
// queued.
func (s *Server) canned(method, path string) (int, http.Header, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.failures {
		if f.method != "" && f.method != method || !strings.Contains(path, f.path) {
			continue
		}
		if f.left--; f.left <= 0 {
			s.failures = slices.Delete(s.failures, i, i+1)
		}
		return f.code, f.header, true
	}
	return 0, nil, false
}

// answer writes code and body as JSON, checking a success against the
// description first (an answer GitHub would not give is a problem too).
func (s *Server) answer(w http.ResponseWriter, r *http.Request, in *openapi3filter.RequestValidationInput, code int, h http.Header, body any) {
	b, _ := json.Marshal(body)
	header := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	for k, v := range h {
		header[k] = v
	}
	if in != nil && code < 300 {
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: code, Header: header,
			Options: &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}}
		out.SetBodyBytes(b)
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			s.mu.Lock()
			s.problems = append(s.problems, fmt.Sprintf("answer %d to %s %s: %v", code, r.Method, r.URL.RequestURI(), err))
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Status: code})
	s.mu.Unlock()
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// operate serves a validated request.
func (s *Server) operate(op string, p map[string]string, r *http.Request, body []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	repo := p["owner"] + "/" + p["repo"]
	switch op {
	case "repos/create-commit-status":
		var in struct {
			State       string  `json:"state"`
			TargetURL   *string `json:"target_url"`
			Description *string `json:"description"`
			Context     *string `json:"context"`
		}
		_ = json.Unmarshal(body, &in)
		st := Status{State: in.State, Context: deref(in.Context, "default"), Description: deref(in.Description, ""), TargetURL: deref(in.TargetURL, "")}
		s.statuses[repo+"@"+p["sha"]] = append(s.statuses[repo+"@"+p["sha"]], st)
		s.nextID++
		return http.StatusCreated, s.statusJSON(r, repo, p["sha"], s.nextID, st)
	case "issues/list-comments":
		list := s.comments[repo+"#"+p["issue_number"]]
		from, to := page(r.URL.Query(), len(list))
		out := []any{}
		for _, c := range list[from:to] {
			out = append(out, s.commentJSON(r, repo, p["issue_number"], c))
		}
		return http.StatusOK, out
	case "issues/create-comment":
		var in struct {
			Body string `json:"body"`
		}
		_ = json.Unmarshal(body, &in)
		c := s.addComment(repo+"#"+p["issue_number"], s.User, in.Body)
		return http.StatusCreated, s.commentJSON(r, repo, p["issue_number"], c)
	case "issues/update-comment":
		id, _ := strconv.ParseInt(p["comment_id"], 10, 64)
		c := s.byID[id]
		if c == nil || !strings.HasPrefix(s.issueOf[id], repo+"#") {
			return http.StatusNotFound, errorBody("Not Found")
		}
		if c.User != s.User {
			return http.StatusForbidden, errorBody("Must have admin rights to Repository.")
		}
		var in struct {
			Body string `json:"body"`
		}
		_ = json.Unmarshal(body, &in)
		c.Body, c.Updated = in.Body, time.Now().UTC().Truncate(time.Second)
		_, number, _ := strings.Cut(s.issueOf[id], "#")
		return http.StatusOK, s.commentJSON(r, repo, number, c)
	}
	return http.StatusNotFound, errorBody("Not Found")
}

// link is the Link header of a listing with a next page.
func (s *Server) link(op string, p map[string]string, r *http.Request) string {
	if op != "issues/list-comments" {
		return ""
	}
	s.mu.Lock()
	n := len(s.comments[p["owner"]+"/"+p["repo"]+"#"+p["issue_number"]])
	s.mu.Unlock()
	q := r.URL.Query()
	_, to := page(q, n)
	if to >= n {
		return ""
	}
	cur, _ := strconv.Atoi(q.Get("page"))
	q.Set("page", strconv.Itoa(max(cur, 1)+1))
	next := url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
	return "<" + next.String() + `>; rel="next"`
}

// page is the slice of n items that per_page and page ask for (GitHub's
// defaults: 30 a page, page 1).
func page(q url.Values, n int) (from, to int) {
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per < 1 {
		per = 30
	}
	p, err := strconv.Atoi(q.Get("page"))
	if err != nil || p < 1 {
		p = 1
	}
	from = min((p-1)*per, n)
	return from, min(from+per, n)
}

func (s *Server) addComment(issue, user, body string) *Comment {
	s.nextID++
	now := time.Now().UTC().Truncate(time.Second)
	c := &Comment{ID: s.nextID, Body: body, User: user, Created: now, Updated: now}
	s.comments[issue] = append(s.comments[issue], c)
	s.byID[c.ID], s.issueOf[c.ID] = c, issue
	return c
}

func deref(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

// apiBase is the base URL the answers' own links start with.
func apiBase(r *http.Request) string { return "http://" + r.Host }

func userJSON(r *http.Request, login string, id int64) map[string]any {
	u := apiBase(r) + "/users/" + login
	return map[string]any{
		"login": login, "id": id, "node_id": "U_" + strconv.FormatInt(id, 10),
		"avatar_url": "https://avatars.example/u/" + strconv.FormatInt(id, 10), "gravatar_id": "",
		"url": u, "html_url": "https://github.example/" + login,
		"followers_url": u + "/followers", "following_url": u + "/following{/other_user}",
		"gists_url": u + "/gists{/gist_id}", "starred_url": u + "/starred{/owner}{/repo}",
		"subscriptions_url": u + "/subscriptions", "organizations_url": u + "/orgs",
		"repos_url": u + "/repos", "events_url": u + "/events{/privacy}",
		"received_events_url": u + "/received_events", "type": "Bot", "site_admin": false,
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Server) statusJSON(r *http.Request, repo, sha string, id int64, st Status) map[string]any {
	now := stamp(time.Now())
	return map[string]any{
		"url": apiBase(r) + "/repos/" + repo + "/statuses/" + sha, "avatar_url": nil,
		"id": id, "node_id": "SC_" + strconv.FormatInt(id, 10), "state": st.State,
		"description": nullable(st.Description), "target_url": nullable(st.TargetURL), "context": st.Context,
		"created_at": now, "updated_at": now, "creator": userJSON(r, s.User, 1),
	}
}

func (s *Server) commentJSON(r *http.Request, repo, number string, c *Comment) map[string]any {
	id := strconv.FormatInt(c.ID, 10)
	base := apiBase(r) + "/repos/" + repo
	return map[string]any{
		"id": c.ID, "node_id": "IC_" + id, "url": base + "/issues/comments/" + id, "body": c.Body,
		"html_url":  "https://github.example/" + repo + "/pull/" + number + "#issuecomment-" + id,
		"issue_url": base + "/issues/" + number, "user": userJSON(r, c.User, 1),
		"created_at": stamp(c.Created), "updated_at": stamp(c.Updated), "author_association": "NONE",
		"reactions": map[string]any{"url": base + "/issues/comments/" + id + "/reactions", "total_count": 0,
			"+1": 0, "-1": 0, "laugh": 0, "confused": 0, "heart": 0, "hooray": 0, "eyes": 0, "rocket": 0},
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
