package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

const validSpec = `{"name":"t","labels":{"branch":"main"},
 "targets":[{"name":"a","url":"http://127.0.0.1:9000/"}],
 "sweep":{"concurrency":[1,4],"requests":[200],"repeats":2}}`

func TestCreateJob(t *testing.T) {
	env := newTestEnv(t, nil)
	resp, body := env.do(t, http.MethodPost, "/v1/jobs", validSpec)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs = %d %s, want 202", resp.StatusCode, body)
	}
	var jr JobResponse
	if err := json.Unmarshal(body, &jr); err != nil {
		t.Fatal(err)
	}
	if loc := resp.Header.Get("Location"); loc != "/v1/jobs/"+jr.ID || jr.ID == "" {
		t.Errorf("Location = %q, want /v1/jobs/%s", loc, jr.ID)
	}
	if jr.Status != job.StatusQueued || jr.Progress.RunsTotal != 4 || jr.Spec.Labels["branch"] != "main" {
		t.Errorf("created job = status %s runs_total %d labels %v, want queued 4 branch:main",
			jr.Status, jr.Progress.RunsTotal, jr.Spec.Labels)
	}
	if _, err := env.store.GetJob(t.Context(), jr.ID); err != nil {
		t.Errorf("stored job %s: %v", jr.ID, err)
	}
	if n := len(env.queue.Tasks()); n != 1 || !strings.Contains(string(env.queue.Tasks()[0].Payload()), jr.ID) {
		t.Errorf("enqueued %d tasks, want 1 naming job %s", n, jr.ID)
	}
}

func TestCreateJobBadInput(t *testing.T) {
	target := func(url string) string {
		return `{"targets":[{"url":"` + url + `"}],"sweep":{"concurrency":[1],"requests":[10]}}`
	}
	sweep := func(s string) string {
		return `{"targets":[{"url":"http://127.0.0.1:9000/"}],"sweep":` + s + `}`
	}
	tests := []struct {
		name   string
		body   string
		status int
		field  string // a field the problem must name ("" = none required)
	}{
		{"malformed JSON", `{"targets":[`, 400, ""},
		{"not an object", `[1,2]`, 400, ""},
		{"empty body", ``, 400, ""},
		{"unknown field", `{"targets":[{"url":"http://127.0.0.1:9000/"}],"bogus":1}`, 422, "bogus"},
		{"wrong type", sweep(`{"concurrency":"four"}`), 422, "sweep.concurrency"},
		{"file URL", target("file:///etc/passwd"), 422, "targets[0].url"},
		{"gopher URL", target("gopher://127.0.0.1:70/"), 422, "targets[0].url"},
		{"non-loopback URL", target("http://benchq.invalid/"), 422, "targets[0].url"},
		{"concurrency 0", sweep(`{"concurrency":[0],"requests":[10]}`), 422, "sweep.concurrency[0]"},
		{"concurrency 100000", sweep(`{"concurrency":[100000],"requests":[100000]}`), 422, "sweep.concurrency[0]"},
		{"requests below concurrency", sweep(`{"concurrency":[10],"requests":[5]}`), 422, "sweep.requests"},
		{"bad duration", `{"targets":[{"url":"http://127.0.0.1:9000/"}],"request":{"timeout":"soon"}}`, 422, "request.timeout"},
		{"no targets", `{}`, 422, "targets"},
		{"ramp without duration", sweep(`{"rate":["100:5000"],"requests":[1000]}`), 422, "sweep.rate[0]"},
		{"ramp not a number", sweep(`{"rate":["100:fast"],"duration":["10s"]}`), 422, "sweep.rate[0]"},
		{"stage of both kinds", `{"targets":[{"url":"http://127.0.0.1:9000/"}],"stages":[{"rate":10,"concurrency":2,"duration":"1s"}]}`, 422, "stages[0]"},
		{"stages without time", `{"targets":[{"url":"http://127.0.0.1:9000/"}],"stages":[{"rate":10,"duration":"0s"}]}`, 422, "stages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t, nil)
			resp, body := env.do(t, http.MethodPost, "/v1/jobs", tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("POST %s = %d %s, want %d", tt.body, resp.StatusCode, body, tt.status)
			}
			p := problem(t, resp, body)
			if tt.field != "" && !namesField(p, tt.field) {
				t.Errorf("POST %s problem = %s, want field %q named", tt.body, body, tt.field)
			}
			if len(env.queue.Tasks()) != 0 {
				t.Errorf("POST %s enqueued %d tasks, want 0", tt.body, len(env.queue.Tasks()))
			}
		})
	}
}

// namesField reports whether the problem names field (or a path below it).
func namesField(p Problem, field string) bool {
	if strings.HasPrefix(p.Field, field) {
		return true
	}
	for _, e := range p.Errors {
		if strings.HasPrefix(e.Field, field) {
			return true
		}
	}
	return false
}

func TestCreateJobBodyTooLarge(t *testing.T) {
	env := newTestEnv(t, func(c *Config) { c.MaxBody = 1 << 20 })
	big := `{"name":"` + strings.Repeat("a", 10<<20) + `"}`
	resp, body := env.do(t, http.MethodPost, "/v1/jobs", big)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("POST 10 MB = %d, want 413", resp.StatusCode)
	}
	if p := problem(t, resp, body); p.Type != problemBase+"body-too-large" {
		t.Errorf("POST 10 MB type = %q, want body-too-large", p.Type)
	}
}

// TestCreateJobEnqueueFails: a job stored but refused by the queue is
// discarded, and the answer is the outage's 503 with Retry-After.
func TestCreateJobEnqueueFails(t *testing.T) {
	env := newTestEnv(t, func(c *Config) { c.UnavailableRetryAfter = 7 * time.Second })
	env.queue.SetErr(errFakeRedis)
	resp, body := env.do(t, http.MethodPost, "/v1/jobs", validSpec)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("POST with a dead queue = %d %s, want 503", resp.StatusCode, body)
	}
	if p := problem(t, resp, body); p.Type != problemBase+"store-unavailable" || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("POST with a dead queue = %+v, Retry-After %q, want store-unavailable with Retry-After 7", p, resp.Header.Get("Retry-After"))
	}
	if strings.Contains(string(body), "secret") || strings.Contains(string(body), "10.1.2.3") {
		t.Errorf("problem leaks the internal error: %s", body)
	}
	env.store.mu.Lock()
	defer env.store.mu.Unlock()
	if n := len(env.store.jobs); n != 0 {
		t.Errorf("%d jobs stored after the queue refused the only one, want 0 (discarded)", n)
	}
}

func seedJob(env *testEnv, id string, st job.Status) {
	env.store.jobs[id] = &job.Job{ID: id, Owner: anonymousOwner, Status: st, CreatedAt: time.Now()}
}

func TestGetJobAndResults(t *testing.T) {
	env := newTestEnv(t, nil)
	seedJob(env, "j1", job.StatusSucceeded)
	env.store.jobs["j1"].Spec = job.Spec{
		Targets:    []job.Target{{Name: "a", URL: "http://127.0.0.1:8081/"}},
		Sweep:      job.Sweep{Concurrency: []int{1, 4}, Requests: []int{100}, Repeats: 2},
		Thresholds: job.Thresholds("rps >= 1000"),
	}
	env.store.jobs["j1"].Verdict = job.VerdictFail
	env.store.runs["j1"] = []job.Run{
		{RunKey: job.RunKey{Point: 1, Repeat: 0}, Target: "a", Concurrency: 4,
			Result: &abreport.Report{ServerSoftware: "fasthttp", RequestsPerSecond: 100, CompleteRequests: 100}},
		{RunKey: job.RunKey{Point: 1, Repeat: 1}, Target: "a", Concurrency: 4,
			Result: &abreport.Report{ServerSoftware: "fasthttp", RequestsPerSecond: 120, CompleteRequests: 100}},
	}

	resp, body := env.do(t, http.MethodGet, "/v1/jobs/j1", "")
	var jr JobResponse
	if resp.StatusCode != 200 || json.Unmarshal(body, &jr) != nil || jr.Status != job.StatusSucceeded || jr.Links.Results != "/v1/jobs/j1/results" ||
		jr.Verdict != job.VerdictFail {
		t.Errorf("GET /v1/jobs/j1 = %d %s, want 200 succeeded, verdict fail, with links", resp.StatusCode, body)
	}
	resp, body = env.do(t, http.MethodGet, "/v1/jobs/j1/results", "")
	var rr ResultsResponse
	if err := json.Unmarshal(body, &rr); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET results = %d %s: %v", resp.StatusCode, body, err)
	}
	if len(rr.Runs) != 2 || rr.Runs[0].Point != 1 || rr.Runs[0].Concurrency != 4 || rr.Runs[0].Result.ServerSoftware != "fasthttp" {
		t.Errorf("GET results runs = %+v, want the two stored runs", rr.Runs)
	}
	an := rr.Analysis
	if len(an.Points) != 2 || an.Points[0].Runs != 0 || an.Points[1].Runs != 2 || an.Points[1].RPS.Mean != 110 {
		t.Errorf("GET results analysis points = %+v, want c = 1 not run, c = 4 with 2 runs at mean 110 req/s", an.Points)
	}
	if an.Verdict.Result != job.VerdictFail || len(an.Verdict.Failures) != 1 || an.Verdict.Failures[0].Concurrency != 4 {
		t.Errorf("GET results verdict = %+v, want fail at c = 4", an.Verdict)
	}
}

func TestNotFound(t *testing.T) {
	env := newTestEnv(t, nil)
	for _, path := range []string{"/v1/jobs/nope", "/v1/jobs/nope/results", "/v1/jobs/nope/events", "/no/such/route"} {
		resp, body := env.do(t, http.MethodGet, path, "")
		if resp.StatusCode != 404 {
			t.Errorf("GET %s = %d, want 404", path, resp.StatusCode)
			continue
		}
		if p := problem(t, resp, body); p.Type != problemBase+"not-found" {
			t.Errorf("GET %s type = %q, want not-found", path, p.Type)
		}
	}
	resp, body := env.do(t, http.MethodPut, "/v1/jobs", "{}")
	if p := problem(t, resp, body); resp.StatusCode != 405 || p.Type != problemBase+"method-not-allowed" {
		t.Errorf("PUT /v1/jobs = %d %s, want 405 method-not-allowed", resp.StatusCode, body)
	}
}

func TestListJobs(t *testing.T) {
	env := newTestEnv(t, nil)
	seedJob(env, "r1", job.StatusRunning)
	seedJob(env, "s1", job.StatusSucceeded)
	resp, body := env.do(t, http.MethodGet, "/v1/jobs?status=running&label=branch:main&label=os:linux&name=Nightly&limit=5&cursor=c1", "")
	var lr ListJobsResponse
	if err := json.Unmarshal(body, &lr); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/jobs = %d %s: %v", resp.StatusCode, body, err)
	}
	if len(lr.Jobs) != 1 || lr.Jobs[0].ID != "r1" || lr.NextCursor != "next-page" {
		t.Errorf("GET /v1/jobs?status=running = %+v, want r1 and a next cursor", lr)
	}
	f := env.store.lastList
	if f.Status != job.StatusRunning || f.Limit != 5 || f.Cursor != "c1" || f.Labels["branch"] != "main" || f.Labels["os"] != "linux" || f.Name != "Nightly" {
		t.Errorf("ListJobs filter = %+v, want running, limit 5, cursor c1, two labels, name Nightly", f)
	}
	for q, field := range map[string]string{"status=done": "status", "label=nocolon": "label", "limit=0": "limit", "limit=x": "limit", "limit=101": "limit"} {
		resp, body := env.do(t, http.MethodGet, "/v1/jobs?"+q, "")
		if p := problem(t, resp, body); resp.StatusCode != 400 || p.Field != field {
			t.Errorf("GET /v1/jobs?%s = %d %s, want 400 naming %s", q, resp.StatusCode, body, field)
		}
	}
	resp, body = env.do(t, http.MethodGet, "/v1/jobs?cursor=garbage", "")
	if p := problem(t, resp, body); resp.StatusCode != 400 || p.Status != 400 {
		t.Errorf("GET /v1/jobs?cursor=garbage = %d %s, want 400 problem", resp.StatusCode, body)
	}
}

func TestCancelJob(t *testing.T) {
	env := newTestEnv(t, nil)
	seedJob(env, "q1", job.StatusQueued)
	seedJob(env, "done", job.StatusSucceeded)
	resp, body := env.do(t, http.MethodDelete, "/v1/jobs/q1", "")
	var jr JobResponse
	if resp.StatusCode != 202 || json.Unmarshal(body, &jr) != nil || !jr.CancelRequested {
		t.Errorf("DELETE queued job = %d %s, want 202 with cancel_requested", resp.StatusCode, body)
	}
	resp, body = env.do(t, http.MethodDelete, "/v1/jobs/done", "")
	if p := problem(t, resp, body); resp.StatusCode != 409 || p.Type != problemBase+"job-finished" {
		t.Errorf("DELETE finished job = %d %s, want 409 job-finished", resp.StatusCode, body)
	}
	resp, _ = env.do(t, http.MethodDelete, "/v1/jobs/nope", "")
	if resp.StatusCode != 404 {
		t.Errorf("DELETE unknown job = %d, want 404", resp.StatusCode)
	}
}

func TestInternalErrorsAreNotEchoed(t *testing.T) {
	env := newTestEnv(t, nil)
	env.store.getErr = errFakeRedis
	resp, body := env.do(t, http.MethodGet, "/v1/jobs/x", "")
	p := problem(t, resp, body)
	if resp.StatusCode != 500 || p.Type != problemBase+"internal" || strings.Contains(string(body), "secret") || p.RequestID == "" {
		t.Errorf("GET with a failing store = %d %s, want 500 internal with a request id and no detail", resp.StatusCode, body)
	}
	if got := resp.Header.Get("X-Request-Id"); got != p.RequestID {
		t.Errorf("X-Request-Id = %q, problem request_id = %q, want equal", got, p.RequestID)
	}
}

func TestPanicBecomesProblem(t *testing.T) {
	env := newTestEnv(t, nil)
	env.store.panicGet = true
	resp, body := env.do(t, http.MethodGet, "/v1/jobs/x", "")
	p := problem(t, resp, body)
	if resp.StatusCode != 500 || strings.Contains(string(body), "boom") {
		t.Errorf("GET with a panicking store = %d %s, want 500 without the panic text", resp.StatusCode, body)
	}
	_ = p
	env.store.panicGet = false
	if resp, _ := env.do(t, http.MethodGet, "/healthz", ""); resp.StatusCode != 200 {
		t.Errorf("after a panic GET /healthz = %d, want 200", resp.StatusCode)
	}
}
