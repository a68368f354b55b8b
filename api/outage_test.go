package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/cihook"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
	"github.com/benchq/benchq/internal/template"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/internal/webhook"
)

// outageEnv is the API on a real redis-server with every dependency
// wired as the service wires it, and one API key.
type outageEnv struct {
	redis *redistest.Server
	rdb   *redis.Client
	store *store.Store
	queue *hookQueue
	srv   *Server
	url   string
	key   apikey.Key
	plain string
	// changePoint is a change point of the key's, for the acknowledge
	// route to write to.
	changePoint string
}

// hookQueue is the real asynq client, with a hook that runs before an
// enqueue: the tests break Redis there, between storing a job and
// enqueueing it.
type hookQueue struct {
	*asynq.Client
	mu     sync.Mutex
	before func()
}

func (q *hookQueue) EnqueueContext(ctx context.Context, t *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error) {
	q.mu.Lock()
	before := q.before
	q.before = nil
	q.mu.Unlock()
	if before != nil {
		before()
	}
	return q.Client.EnqueueContext(ctx, t, opts...)
}

func (q *hookQueue) beforeNext(fn func()) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.before = fn
}

const outageRetryAfter = 3 * time.Second

func newOutageEnv(t *testing.T) *outageEnv {
	t.Helper()
	srv := redistest.Start(t)
	// A short read timeout, so that a paused Redis times out quickly.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	st := store.New(rdb, store.Options{})
	env := &outageEnv{redis: srv, rdb: rdb, store: st, queue: &hookQueue{Client: asynq.NewClientFromRedisClient(rdb)}}
	env.srv = New(Config{CheckURL: testservers.LoopbackOnly, UnavailableRetryAfter: outageRetryAfter, EventPoll: 20 * time.Millisecond},
		Deps{Store: st, Queue: env.queue, Keys: st, Quotas: st, Deliveries: st, Idempotency: st, Selector: st,
			Targets: targetverify.New(st, targetverify.Config{Timeout: time.Second}), Templates: st, Schedules: st, Pinner: st, ChangePoints: st})
	hs := httptest.NewServer(env.srv.Handler())
	t.Cleanup(hs.Close)
	env.url = hs.URL
	k, plain, err := apikey.New("ci", false, apikey.Quota{}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	env.key, env.plain = k, plain
	env.addKey(t)
	kept, _, err := st.RecordChangePoints(t.Context(), k.ID, outageTemplate, []job.ChangePoint{{Series: "s", JobID: "j", Magnitude: 0.2}}, false)
	if err != nil {
		t.Fatal(err)
	}
	env.changePoint = kept[0].ID
	return env
}

// addKey stores the env's key, again after a restart emptied Redis.
func (e *outageEnv) addKey(t *testing.T) {
	t.Helper()
	if err := e.store.AddKey(t.Context(), e.key); err != nil {
		t.Fatal(err)
	}
}

// send makes one request as the env's key; an event stream is cut once
// its headers are in, after a second at most.
func (e *outageEnv) send(t *testing.T, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.plain)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		return resp, nil
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, b
}

// createJob submits spec and returns the job's id.
func (e *outageEnv) createJob(t *testing.T, spec string) string {
	t.Helper()
	resp, body := e.send(t, http.MethodPost, "/v1/jobs", spec)
	var jr JobResponse
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &jr) != nil || jr.ID == "" {
		t.Fatalf("POST /v1/jobs = %d %s, want 202", resp.StatusCode, body)
	}
	return jr.ID
}

// createJobWithDelivery creates a job with a failed webhook delivery, so
// that redelivering it (delivery 1) writes.
func (e *outageEnv) createJobWithDelivery(t *testing.T) string {
	t.Helper()
	id := e.createJob(t, webhookJob)
	d := &webhook.Delivery{JobID: id, ID: "msg_" + id, Event: "job.succeeded", URL: "http://127.0.0.1:9/hooks",
		Status: webhook.StatusFailed, MaxRetry: 1, Payload: json.RawMessage(`{"type":"job.succeeded"}`)}
	if _, err := e.store.CreateDelivery(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	tp := &template.Template{Name: outageTemplate, Owner: e.key.ID, Schedule: &template.Schedule{Cron: "0 3 * * *"},
		Values: map[string]string{"target_url": "http://127.0.0.1:9/"},
		Spec:   job.Spec{Targets: []job.Target{{URL: "{{target_url}}"}}},
		Triggers: template.Triggers{
			GitHub: &template.GitHubTrigger{Repository: "acme/shop", Secret: outageSecret},
			GitLab: &template.GitLabTrigger{Project: "acme/shop", Token: outageSecret},
		}}
	if _, err := e.store.PutTemplate(t.Context(), tp); err != nil {
		t.Fatal(err)
	}
	return id
}

// The template createJobWithDelivery saves, and its hooks' secret.
const (
	outageTemplate = "outage-tpl"
	outageSecret   = "outage-secret-0123456789"
	outagePush     = `{"ref":"refs/heads/main","after":"9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4","repository":{"full_name":"acme/shop"},"project":{"path_with_namespace":"acme/shop"}}`
)

// routeCall is one request to a /v1 route with a valid body and the
// headers the route needs.
type routeCall struct {
	method, route, path, body string
	header                    []string
}

// v1Calls builds a request for every /v1 route the router has, so a route
// added later is covered without touching this test; a route that needs a
// body this test does not know fails it.
func (e *outageEnv) v1Calls(t *testing.T, jobID string) []routeCall {
	t.Helper()
	bodies := map[string]string{
		"POST /v1/jobs":                                 webhookJob,
		"POST /v1/targets/verify":                       `{"url":"http://127.0.0.1:9/"}`,
		"POST /v1/jobs/:id/deliveries/:n/redeliver":     "",
		"DELETE /v1/jobs/:id":                           "",
		"PUT /v1/jobs/:id/pin":                          "",
		"DELETE /v1/jobs/:id/pin":                       "",
		"POST /v1/templates":                            `{"name":"outage-new","spec":{"targets":[{"url":"{{target_url}}"}]},"values":{"target_url":"http://127.0.0.1:9/"}}`,
		"PUT /v1/templates/:name":                       `{"spec":{"targets":[{"url":"{{target_url}}"}]},"values":{"target_url":"http://127.0.0.1:9/"}}`,
		"DELETE /v1/templates/:name":                    "",
		"POST /v1/templates/:name/run":                  `{}`,
		"POST /v1/hooks/github":                         outagePush,
		"POST /v1/hooks/gitlab":                         outagePush,
		"POST /v1/schedules/:name/pause":                "",
		"POST /v1/schedules/:name/resume":               "",
		"POST /v1/trends/change-points/:id/acknowledge": "",
	}
	// ids are the routes whose :id is not a job's.
	ids := map[string]string{"POST /v1/trends/change-points/:id/acknowledge": e.changePoint}
	headers := map[string][]string{
		"POST /v1/hooks/github": {"X-GitHub-Event", "push", "X-GitHub-Delivery", "outage-" + jobID,
			"X-Hub-Signature-256", cihook.GitHubSignature(outageSecret, []byte(outagePush))},
		"POST /v1/hooks/gitlab": {"X-Gitlab-Event", "Push Hook", "X-Gitlab-Event-UUID", "outage-" + jobID, "X-Gitlab-Token", outageSecret},
	}
	queries := map[string]string{"GET /v1/trends": "?template=" + outageTemplate + "&metric=rps"}
	var calls []routeCall
	for _, r := range e.srv.echo.Routes() {
		if !strings.HasPrefix(r.Path, "/v1/") {
			continue
		}
		body, known := bodies[r.Method+" "+r.Path]
		if r.Method != http.MethodGet && !known {
			t.Fatalf("route %s %s takes a body this test does not know: add a valid one to v1Calls", r.Method, r.Path)
		}
		name := outageTemplate
		if r.Method == http.MethodDelete {
			name = "outage-other" // the calls after it still find outage-tpl
		}
		id := jobID
		if other, ok := ids[r.Method+" "+r.Path]; ok {
			id = other
		}
		path := strings.NewReplacer(":name", name, ":id", id, ":n", "1").Replace(r.Path) + queries[r.Method+" "+r.Path]
		calls = append(calls, routeCall{method: r.Method, route: r.Path, path: path, body: body, header: headers[r.Method+" "+r.Path]})
	}
	if len(calls) < 11 {
		t.Fatalf("found %d /v1 routes, want at least the 11 there are", len(calls))
	}
	return calls
}

// wantUnavailable checks an answer is the outage's 503: problem+json of
// type store-unavailable, with Retry-After, a detail naming the condition,
// and nothing of Redis's address or error.
func (e *outageEnv) wantUnavailable(t *testing.T, what string, resp *http.Response, body []byte, cond string) {
	t.Helper()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("%s = %d %s, want 503", what, resp.StatusCode, body)
		return
	}
	p := problem(t, resp, body)
	if p.Type != problemBase+"store-unavailable" || !strings.Contains(p.Detail, cond) {
		t.Errorf("%s = %+v, want type store-unavailable and a detail saying %q", what, p, cond)
	}
	if ra := resp.Header.Get("Retry-After"); ra != "3" {
		t.Errorf("%s Retry-After = %q, want 3", what, ra)
	}
	// The request id and the instance (a job id) are random: "OOM" or the
	// port's digits may turn up in them by chance.
	var fields map[string]any
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatalf("%s: problem is not JSON: %v", what, err)
	}
	delete(fields, "request_id")
	delete(fields, "instance")
	said, _ := json.Marshal(fields)
	port := e.redis.Addr[strings.LastIndex(e.redis.Addr, ":")+1:]
	for _, leak := range []string{port, "dial", "OOM", "maxmemory", "redis"} {
		if strings.Contains(string(said), leak) {
			t.Errorf("%s problem shows %q: %s", what, leak, body)
		}
	}
}

// waitReady polls /readyz until it answers want, past its cache.
func (e *outageEnv) waitReady(t *testing.T, want int) (*http.Response, []byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := e.send(t, http.MethodGet, "/readyz", "")
		if resp.StatusCode == want || time.Now().After(deadline) {
			return resp, body
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRedisKilledEveryRouteAnswers503AndRecovers kills Redis under a
// running API: every /v1 route answers the outage's 503, /readyz says
// unreachable; restarted on the same port, the same server (and the
// same Redis client) serves every route again.
func TestRedisKilledEveryRouteAnswers503AndRecovers(t *testing.T) {
	env := newOutageEnv(t)
	id := env.createJobWithDelivery(t)
	calls := env.v1Calls(t, id)

	env.redis.Kill()
	for _, c := range calls {
		resp, body := env.send(t, c.method, c.path, c.body, c.header...)
		env.wantUnavailable(t, c.method+" "+c.route, resp, body, "unreachable")
	}
	resp, body := env.waitReady(t, http.StatusServiceUnavailable)
	env.wantUnavailable(t, "GET /readyz", resp, body, "unreachable")

	env.redis.Restart(t)
	if resp, body := env.waitReady(t, http.StatusOK); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /readyz after the restart = %d %s, want 200", resp.StatusCode, body)
	}
	env.addKey(t) // the restarted Redis is empty
	id = env.createJobWithDelivery(t)
	for _, c := range env.v1Calls(t, id) {
		resp, body := env.send(t, c.method, c.path, c.body, c.header...)
		if resp.StatusCode >= 500 {
			t.Errorf("%s %s after the restart = %d %s, want it served", c.method, c.route, resp.StatusCode, body)
		}
	}
}

// TestRedisOutOfMemory: a Redis out of memory under noeviction refuses
// writes. Job creation and the quota path answer the outage's 503, not a
// 500; every other writing route too, while reads are still served;
// /readyz says "refusing writes"; nothing is left half-written; and with
// the memory back, all works again.
func TestRedisOutOfMemory(t *testing.T) {
	env := newOutageEnv(t)
	id := env.createJobWithDelivery(t)
	before := env.keyCount(t)

	env.redis.RunOutOfMemory(t)
	for _, c := range env.v1Calls(t, id) {
		resp, body := env.send(t, c.method, c.path, c.body, c.header...)
		if c.method == http.MethodGet {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s out of memory = %d %s, want 200: reads are served", c.method, c.route, resp.StatusCode, body)
			}
			continue
		}
		if c.method+" "+c.route == "DELETE /v1/templates/:name" {
			// Served: Redis deletes out of memory (noeviction refuses
			// only commands that may grow it), and a delete is all it is.
			if resp.StatusCode >= 500 {
				t.Errorf("%s out of memory = %d %s, want it served", c.route, resp.StatusCode, body)
			}
			continue
		}
		env.wantUnavailable(t, c.method+" "+c.route+" out of memory", resp, body, "refusing writes")
	}
	resp, body := env.send(t, http.MethodPost, "/v1/jobs", webhookJob, idempotencyHeader, "oom-1")
	env.wantUnavailable(t, "POST /v1/jobs with an Idempotency-Key out of memory", resp, body, "refusing writes")
	resp, body = env.waitReady(t, http.StatusServiceUnavailable)
	env.wantUnavailable(t, "GET /readyz out of memory", resp, body, "refusing writes")

	env.redis.RecoverMemory(t)
	if resp, body := env.waitReady(t, http.StatusOK); resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /readyz with memory back = %d %s, want 200", resp.StatusCode, body)
	}
	// Only the probe's key is new: no job, slot, secret or idempotency key.
	if after := env.keyCount(t); after != before+1 {
		t.Errorf("benchq keys: %d before, %d after the refused writes, want only the probe's one more", before, after)
	}
	env.wantJobs(t, id)
	if status, _, _ := postKeyed(t, env.url, env.plain, "oom-1", webhookJob); status != http.StatusAccepted {
		t.Errorf("retry with the Idempotency-Key refused out of memory = %d, want 202 (the key was never held)", status)
	}
}

// TestCreationFailingHalfWayLeavesNothing breaks Redis after the job is
// stored and before it is enqueued: the answer is the outage's 503, and
// the stored job, its webhook secret, its active-job slot and its
// Idempotency-Key claim are all undone, at once when Redis still serves
// deletes (out of memory) and as soon as it answers again when it hung.
func TestCreationFailingHalfWayLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cond        string
		break_, fix func(t *testing.T, env *outageEnv)
	}{
		{"out of memory", "refusing writes",
			func(t *testing.T, env *outageEnv) { env.redis.RunOutOfMemory(t) },
			func(t *testing.T, env *outageEnv) { env.redis.RecoverMemory(t) }},
		{"hung", "unreachable",
			func(t *testing.T, env *outageEnv) { env.redis.Pause(t) },
			func(t *testing.T, env *outageEnv) { env.redis.Resume(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newOutageEnv(t)
			kept := env.createJob(t, webhookJob) // publishes the queue, as in a running service
			env.queue.beforeNext(func() { tc.break_(t, env) })
			resp, body := env.send(t, http.MethodPost, "/v1/jobs", webhookJob, idempotencyHeader, "half-1")
			env.wantUnavailable(t, "POST /v1/jobs broken before the enqueue", resp, body, tc.cond)
			tc.fix(t, env)

			// The discard runs in the background and frees the slot after
			// deleting the job, so both are awaited.
			slots := func() (int, error) { return env.store.ActiveJobs(t.Context(), env.key.ID) }
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if n, err := slots(); err == nil && n == 1 && env.onlyJobs(t, kept) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			env.wantJobs(t, kept)
			if n, err := slots(); err != nil || n != 1 {
				t.Errorf("active-job slots = %d, %v, want 1: the refused job's slot is back", n, err)
			}
			if keys, _ := env.rdb.Keys(t.Context(), "benchq:job:*").Result(); len(keys) > 0 {
				for _, k := range keys {
					if !strings.HasPrefix(k, "benchq:job:{"+kept+"}") {
						t.Errorf("key %s of the refused job is left", k)
					}
				}
			}
			if status, jr, _ := postKeyed(t, env.url, env.plain, "half-1", webhookJob); status != http.StatusAccepted || jr.ID == "" {
				t.Errorf("retry with the Idempotency-Key = %d, want 202 with a new job (the key was freed)", status)
			}
		})
	}
}

// keyCount counts benchq's own keys (asynq's are its business).
func (e *outageEnv) keyCount(t *testing.T) int {
	t.Helper()
	keys, err := e.rdb.Keys(t.Context(), "benchq:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// onlyJobs reports whether the store lists exactly the jobs ids.
func (e *outageEnv) onlyJobs(t *testing.T, ids ...string) bool {
	t.Helper()
	jobs, _, err := e.store.ListJobs(t.Context(), store.ListFilter{Limit: 100})
	if err != nil || len(jobs) != len(ids) {
		return false
	}
	for i, j := range jobs {
		if j.ID != ids[len(ids)-1-i] || j.Status != job.StatusQueued {
			return false
		}
	}
	return true
}

func (e *outageEnv) wantJobs(t *testing.T, ids ...string) {
	t.Helper()
	if !e.onlyJobs(t, ids...) {
		jobs, _, err := e.store.ListJobs(t.Context(), store.ListFilter{Limit: 100})
		got := make([]string, 0, len(jobs))
		for _, j := range jobs {
			got = append(got, j.ID+" "+string(j.Status))
		}
		t.Errorf("jobs = %v (%v), want only %v, queued", got, err, ids)
	}
}

// TestRedeliveryFailingHalfWayIsUndone: a redelivery marked pending whose
// enqueue fails is put back as it was once Redis takes writes again, so
// it can be asked again rather than refused as in flight for good.
func TestRedeliveryFailingHalfWayIsUndone(t *testing.T) {
	env := newOutageEnv(t)
	id := env.createJobWithDelivery(t)
	path := "/v1/jobs/" + id + "/deliveries/1/redeliver"
	env.queue.beforeNext(func() { env.redis.RunOutOfMemory(t) })
	resp, body := env.send(t, http.MethodPost, path, "")
	env.wantUnavailable(t, "POST redeliver broken before the enqueue", resp, body, "refusing writes")
	if d, err := env.store.Delivery(t.Context(), id, 1); err != nil || d.Status != webhook.StatusPending {
		t.Fatalf("delivery out of memory = %+v, %v; want it still pending (the undo cannot write yet)", d, err)
	}
	env.redis.RecoverMemory(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		d, err := env.store.Delivery(t.Context(), id, 1)
		if err == nil && d.Status == webhook.StatusFailed && d.Redeliveries == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery with memory back = %+v, %v; want failed with no redelivery, as before", d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if resp, body := env.send(t, http.MethodPost, path, ""); resp.StatusCode != http.StatusAccepted {
		t.Errorf("redeliver again = %d %s, want 202", resp.StatusCode, body)
	}
}

// TestOpenAPIDocuments503OnEveryV1Route: each /v1 route, present or
// added later, documents the outage's 503 and its Retry-After.
func TestOpenAPIDocuments503OnEveryV1Route(t *testing.T) {
	env := newTestEnv(t, nil)
	_, body := env.do(t, http.MethodGet, "/openapi.json", "")
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Headers map[string]any `json:"headers"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	param := strings.NewReplacer(":name", "{name}", ":id", "{id}", ":n", "{n}")
	for _, r := range env.srv.echo.Routes() {
		if !strings.HasPrefix(r.Path, "/v1/") {
			continue
		}
		op, ok := doc.Paths[param.Replace(r.Path)][strings.ToLower(r.Method)]
		if _, documented := op.Responses["503"].Headers["Retry-After"]; !ok || !documented {
			t.Errorf("openapi.json: %s %s documents no 503 with Retry-After", r.Method, r.Path)
		}
	}
}
