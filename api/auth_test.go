package api

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/internal/webhook"
)

// keyEnv is the API on a real Redis store, with API keys; the queue is a
// fake, since nothing here runs a job.
type keyEnv struct {
	store *store.Store
	queue *jobtest.Queue
	srv   *Server
	url   string
}

func newKeyEnv(t *testing.T, tune func(*Config)) *keyEnv {
	t.Helper()
	return newKeyEnvWith(t, tune, nil)
}

// newKeyEnvWith is newKeyEnv in the all-in-one open mode, with every
// store-backed dependency wired; deps may replace some (a fake verifier).
func newKeyEnvWith(t *testing.T, tune func(*Config), deps func(*Deps)) *keyEnv {
	t.Helper()
	st := store.New(redistest.Start(t).Client(t), store.Options{})
	env := &keyEnv{store: st, queue: &jobtest.Queue{}}
	cfg := Config{OpenUntilFirstKey: true, CheckURL: testservers.LoopbackOnly, Heartbeat: 50 * time.Millisecond, EventPoll: 20 * time.Millisecond}
	if tune != nil {
		tune(&cfg)
	}
	d := Deps{Store: st, Queue: env.queue, Keys: st, Quotas: st, Deliveries: st, Idempotency: st, Selector: st}
	if deps != nil {
		deps(&d)
	}
	env.srv = New(cfg, d)
	hs := httptest.NewServer(env.srv.Handler())
	t.Cleanup(hs.Close)
	env.url = hs.URL
	return env
}

// addKey stores a key and returns its id and plaintext.
func (e *keyEnv) addKey(t *testing.T, name string, admin bool, q apikey.Quota) (string, string) {
	t.Helper()
	k, plain, err := apikey.New(name, admin, q, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.AddKey(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	return k.ID, plain
}

// do sends a request with key as the bearer token ("" sends none).
func (e *keyEnv) do(t *testing.T, method, path, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return roundTrip(t, req)
}

const okSpec = `{"targets":[{"url":"http://127.0.0.1:9/"}],"sweep":{"concurrency":[2],"requests":[10]}}`

// create submits okSpec (or body) and returns the job id, failing unless 202.
func (e *keyEnv) create(t *testing.T, key string) string {
	t.Helper()
	resp, b := e.do(t, http.MethodPost, "/v1/jobs", key, okSpec)
	var j JobResponse
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &j) != nil {
		t.Fatalf("POST /v1/jobs = %d %s, want 202", resp.StatusCode, b)
	}
	return j.ID
}

func (e *keyEnv) listIDs(t *testing.T, key string) map[string]bool {
	t.Helper()
	resp, b := e.do(t, http.MethodGet, "/v1/jobs?limit=100", key, "")
	var l ListJobsResponse
	if resp.StatusCode != 200 || json.Unmarshal(b, &l) != nil {
		t.Fatalf("GET /v1/jobs = %d %s", resp.StatusCode, b)
	}
	ids := map[string]bool{}
	for _, j := range l.Jobs {
		ids[j.ID] = true
	}
	return ids
}

// TestIsolation: two keys A and B and an admin; B gets 404 for everything
// of A's, listings are scoped, the admin sees all.
func TestIsolation(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, a := env.addKey(t, "a", false, apikey.Quota{})
	_, b := env.addKey(t, "b", false, apikey.Quota{})
	_, admin := env.addKey(t, "ops", true, apikey.Quota{})
	jobA, jobB := env.create(t, a), env.create(t, b)

	for _, path := range []string{"", "/results", "/report?format=json", "/events"} {
		resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+jobA+path, b, "")
		if resp.StatusCode != 404 || problem(t, resp, body).Type != problemBase+"not-found" {
			t.Errorf("B: GET A's job%s = %d %s, want 404 not-found", path, resp.StatusCode, body)
		}
	}
	if resp, body := env.do(t, http.MethodDelete, "/v1/jobs/"+jobA, b, ""); resp.StatusCode != 404 {
		t.Errorf("B: DELETE A's job = %d %s, want 404", resp.StatusCode, body)
	}
	if j, err := env.store.GetJob(t.Context(), jobA); err != nil || j.CancelRequested || j.Status != "queued" {
		t.Errorf("A's job after B's DELETE = %+v, %v, want queued and untouched", j, err)
	}
	for _, path := range []string{"", "/results"} {
		if resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+jobA+path, a, ""); resp.StatusCode != 200 {
			t.Errorf("A: GET own job%s = %d %s, want 200", path, resp.StatusCode, body)
		}
		if resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+jobA+path, admin, ""); resp.StatusCode != 200 {
			t.Errorf("admin: GET A's job%s = %d %s, want 200", path, resp.StatusCode, body)
		}
	}

	if got := env.listIDs(t, a); len(got) != 1 || !got[jobA] {
		t.Errorf("A lists %v, want only %s", got, jobA)
	}
	if got := env.listIDs(t, b); len(got) != 1 || !got[jobB] {
		t.Errorf("B lists %v, want only %s", got, jobB)
	}
	if got := env.listIDs(t, admin); len(got) != 2 || !got[jobA] || !got[jobB] {
		t.Errorf("admin lists %v, want both jobs", got)
	}
	if resp, body := env.do(t, http.MethodDelete, "/v1/jobs/"+jobA, admin, ""); resp.StatusCode != 202 {
		t.Errorf("admin: DELETE A's job = %d %s, want 202", resp.StatusCode, body)
	}
}

// TestDeliveriesIsolation: B can neither read nor redeliver the webhook
// deliveries of A's job; both are 404, as for a job that does not exist,
// and B's redeliver changes nothing and enqueues nothing.
func TestDeliveriesIsolation(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, a := env.addKey(t, "a", false, apikey.Quota{})
	_, b := env.addKey(t, "b", false, apikey.Quota{})
	jobA := env.create(t, a)
	d := &webhook.Delivery{JobID: jobA, ID: "msg_of_a", Event: "job.succeeded", URL: "http://127.0.0.1:9000/hooks",
		Status: webhook.StatusFailed, MaxRetry: 3, Payload: json.RawMessage(`{"type":"job.succeeded","secret":"of-a"}`)}
	if _, err := env.store.CreateDelivery(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	base := "/v1/jobs/" + jobA + "/deliveries"
	_, missing := env.do(t, http.MethodGet, "/v1/jobs/"+job.NewID()+"/deliveries", b, "")
	for _, req := range []struct{ method, path string }{{http.MethodGet, base}, {http.MethodPost, base + "/1/redeliver"}} {
		resp, body := env.do(t, req.method, req.path, b, "")
		p := problem(t, resp, body)
		if resp.StatusCode != 404 || p.Type != problemBase+"not-found" || strings.Contains(string(body), "msg_of_a") || strings.Contains(string(body), "of-a") {
			t.Errorf("B: %s %s = %d %s, want 404 not-found showing nothing", req.method, req.path, resp.StatusCode, body)
		}
		if req.method == http.MethodGet && problem(t, resp, body).Title != problem(t, resp, missing).Title {
			t.Errorf("B: A's deliveries answer %s, a missing job's %s: want them alike", body, missing)
		}
	}
	got, err := env.store.Delivery(t.Context(), jobA, 1)
	if err != nil || got.Status != webhook.StatusFailed || got.Redeliveries != 0 {
		t.Errorf("A's delivery after B's redeliver = %+v, %v, want failed and never redelivered", got, err)
	}
	if n := len(env.queue.Tasks()); n != 1 {
		t.Errorf("%d tasks enqueued, want 1 (A's job): B's redeliver must enqueue nothing", n)
	}
	if resp, body := env.do(t, http.MethodGet, base, a, ""); resp.StatusCode != 200 || !strings.Contains(string(body), "msg_of_a") {
		t.Errorf("A: GET own deliveries = %d %s, want 200 listing msg_of_a", resp.StatusCode, body)
	}
}

// TestCompareToAnotherKeysJob: naming another key's job id in compare_to
// is the same 422 as naming a job that does not exist, so neither the
// job nor its runs can be reached through a comparison.
func TestCompareToAnotherKeysJob(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, a := env.addKey(t, "a", false, apikey.Quota{})
	_, b := env.addKey(t, "b", false, apikey.Quota{})
	jobA := env.create(t, a)
	withCompare := func(id string) string {
		return `{"targets":[{"url":"http://127.0.0.1:9/"}],"sweep":{"concurrency":[2],"requests":[10]},"compare_to":"` + id + `"}`
	}
	detail := func(key, id string) string {
		t.Helper()
		resp, body := env.do(t, http.MethodPost, "/v1/jobs", key, withCompare(id))
		p := problem(t, resp, body)
		if resp.StatusCode != 422 || !hasField(p, "compare_to") {
			t.Fatalf("POST with compare_to %s = %d %s, want 422 naming compare_to", id, resp.StatusCode, body)
		}
		return strings.ReplaceAll(fmt.Sprintf("%s %d %s %s %v", p.Type, p.Status, p.Detail, p.Field, p.Errors), id, "ID")
	}
	missing := job.NewID()
	foreign, absent := detail(b, jobA), detail(b, missing)
	if foreign != absent || !strings.Contains(foreign, "no job") {
		t.Errorf("compare_to A's job answers\n%s\nand a missing job\n%s\nwant the same \"no job\" problem", foreign, absent)
	}
	if resp, body := env.do(t, http.MethodPost, "/v1/jobs", a, withCompare(jobA)); resp.StatusCode != 202 {
		t.Errorf("A: compare_to its own job = %d %s, want 202", resp.StatusCode, body)
	}
}

// TestIdempotencyKeyPerAPIKey: the same Idempotency-Key and body sent by
// another API key creates that key's own job; it never replays the first
// key's job.
func TestIdempotencyKeyPerAPIKey(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, a := env.addKey(t, "a", false, apikey.Quota{})
	_, b := env.addKey(t, "b", false, apikey.Quota{})
	post := func(key string) (int, JobResponse, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, env.url+"/v1/jobs", strings.NewReader(okSpec))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "deploy-42")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var j JobResponse
		if err := json.NewDecoder(resp.Body).Decode(&j); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, j, resp.Header
	}
	statusA, jobA, _ := post(a)
	statusB, jobB, hdrB := post(b)
	if statusA != 202 || statusB != 202 || jobB.ID == "" || jobB.ID == jobA.ID || hdrB.Get("Idempotent-Replayed") != "" {
		t.Fatalf("A then B with one Idempotency-Key = %d %s, %d %s (replayed %q), want two 202s with distinct jobs",
			statusA, jobA.ID, statusB, jobB.ID, hdrB.Get("Idempotent-Replayed"))
	}
	if stored, err := env.store.GetJob(t.Context(), jobB.ID); err != nil || stored.Owner != keyID(t, env, b) {
		t.Errorf("B's job = %+v, %v, want owned by B", stored, err)
	}
	if status, again, hdr := post(b); status != 200 || again.ID != jobB.ID || hdr.Get("Idempotent-Replayed") != "true" {
		t.Errorf("B's replay = %d %s, want 200 replaying B's own job %s", status, again.ID, jobB.ID)
	}
}

// TestUnauthorized: once a key exists, a missing, malformed, unknown or
// revoked key is a 401 problem with a Bearer challenge that never echoes
// the key; the operational endpoints stay open.
func TestUnauthorized(t *testing.T) {
	env := newKeyEnv(t, nil)
	_, good := env.addKey(t, "a", false, apikey.Quota{})
	_, revoked := env.addKey(t, "old", false, apikey.Quota{})
	if _, err := env.store.RevokeKey(t.Context(), keyID(t, env, revoked), time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		header string
		detail string
	}{
		{"no key", "", "an API key is required"},
		{"unknown key", "Bearer bq_" + strings.Repeat("A", 43), "not valid"},
		{"foreign token", "Bearer ghp_0123456789", "not valid"},
		{"revoked key", "Bearer " + revoked, "revoked"},
		{"basic scheme", "Basic " + good, "must be Bearer"},
		{"empty bearer", "Bearer ", "must be Bearer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, route := range []struct{ method, path, body string }{
				{http.MethodGet, "/v1/jobs", ""}, {http.MethodPost, "/v1/jobs", okSpec},
				{http.MethodGet, "/v1/jobs/anything/results", ""}, {http.MethodGet, "/v1/no-such-route", ""},
			} {
				req, _ := http.NewRequestWithContext(t.Context(), route.method, env.url+route.path, strings.NewReader(route.body))
				if tt.header != "" {
					req.Header.Set("Authorization", tt.header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 401 {
					t.Fatalf("%s %s = %d %s, want 401", route.method, route.path, resp.StatusCode, body)
				}
				p := problem(t, resp, body)
				if p.Type != problemBase+"unauthorized" || !strings.Contains(p.Detail, tt.detail) {
					t.Errorf("problem = %+v, want unauthorized saying %q", p, tt.detail)
				}
				if ch := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(ch, `Bearer realm="benchq"`) {
					t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", ch)
				}
				if _, secret, _ := strings.Cut(tt.header, " "); len(secret) > 4 && strings.Contains(string(body), secret) {
					t.Errorf("401 body echoes the presented key: %s", body)
				}
			}
		})
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json"} {
		if resp, body := env.do(t, http.MethodGet, path, "", ""); resp.StatusCode != 200 {
			t.Errorf("GET %s without a key = %d %s, want 200", path, resp.StatusCode, body)
		}
	}
	if resp, body := env.do(t, http.MethodPut, "/v1/jobs", good, "{}"); resp.StatusCode != 405 {
		t.Errorf("PUT /v1/jobs with a key = %d %s, want 405", resp.StatusCode, body)
	}
}

// keyID finds the id of a plaintext key through the store, as the API does.
func keyID(t *testing.T, env *keyEnv, plain string) string {
	t.Helper()
	k, err := apikey.Authenticate(t.Context(), env.store, plain)
	if err != nil {
		t.Fatal(err)
	}
	return k.ID
}

// TestOpenModeEndsWithFirstKey: with no key, loopback admits keyless
// requests (still checking any key presented); the first key closes it
// within the key-count cache's second, and for good: revoking every key
// does not open it again, in this process or a new one.
func TestOpenModeEndsWithFirstKey(t *testing.T) {
	env := newKeyEnv(t, nil)
	env.create(t, "")
	if resp, body := env.do(t, http.MethodGet, "/v1/jobs", "bq_forged", ""); resp.StatusCode != 401 {
		t.Errorf("open mode with a bad key = %d %s, want 401: a presented key is always checked", resp.StatusCode, body)
	}
	id, key := env.addKey(t, "first", false, apikey.Quota{})
	deadline := time.Now().Add(3 * keyCountTTL)
	for {
		resp, _ := env.do(t, http.MethodGet, "/v1/jobs", "", "")
		if resp.StatusCode == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("keyless request still %d %v after a key was added, want 401 within %v", resp.StatusCode, 3*keyCountTTL, keyCountTTL)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ids := env.listIDs(t, key); len(ids) != 0 {
		t.Errorf("the new key lists the anonymous jobs %v, want none", ids)
	}

	if _, err := env.store.RevokeKey(t.Context(), id, time.Now()); err != nil {
		t.Fatal(err)
	}
	restarted := New(Config{OpenUntilFirstKey: true, CheckURL: testservers.LoopbackOnly}, Deps{Store: env.store, Queue: env.queue, Keys: env.store, Quotas: env.store})
	restarted.auth.listening(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, slog.New(slog.DiscardHandler))
	hs := httptest.NewServer(restarted.Handler())
	t.Cleanup(hs.Close)
	for name, url := range map[string]string{"same process": env.url, "restarted": hs.URL} {
		resp, err := http.Get(url + "/v1/jobs")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%s, every key revoked: keyless GET /v1/jobs = %d, want 401: a revoked key still ends the open mode", name, resp.StatusCode)
		}
	}
}

// TestAnonymousOwnsOnlyItsJobs: the open mode's caller is an owner of its
// own ("anonymous"), not the "" that store filters read as every owner:
// it neither lists nor reads a job another owner stored meanwhile.
func TestAnonymousOwnsOnlyItsJobs(t *testing.T) {
	env := newKeyEnv(t, nil)
	mine := env.create(t, "")
	foreign := &job.Job{ID: job.NewID(), Owner: "key_0123456789ab", Status: job.StatusQueued, CreatedAt: time.Now().UTC(),
		Spec: job.Spec{Name: "secret-spec", Targets: []job.Target{{Name: "a", URL: "http://127.0.0.1:9/"}}}}
	if err := env.store.CreateJob(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	if got := env.listIDs(t, ""); len(got) != 1 || !got[mine] {
		t.Errorf("anonymous lists %v, want only its own %s", got, mine)
	}
	if resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+foreign.ID, "", ""); resp.StatusCode != 404 {
		t.Errorf("anonymous GET of another owner's job = %d %s, want 404", resp.StatusCode, body)
	}
	if j, err := env.store.GetJob(t.Context(), mine); err != nil || j.Owner != anonymousOwner {
		t.Errorf("anonymous job owner = %+v, %v, want %q", j, err, anonymousOwner)
	}
}

// TestOpenModeOnlyWhenAsked: without OpenUntilFirstKey (benchq serve) and
// beyond loopback, a keyless request is a 401 even when no key exists.
func TestOpenModeOnlyWhenAsked(t *testing.T) {
	var logs strings.Builder
	keys := newKeyEnv(t, func(c *Config) { c.OpenUntilFirstKey = false })
	keys.srv.auth.listening(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, slog.New(slog.NewTextHandler(&logs, nil)))
	if resp, body := keys.do(t, http.MethodGet, "/v1/jobs", "", ""); resp.StatusCode != 401 {
		t.Errorf("serve on loopback with no key stored: GET = %d %s, want 401", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "every /v1 request needs an API key") || !strings.Contains(logs.String(), "no API key exists yet") {
		t.Errorf("startup log = %q, want keys required and none existing", logs.String())
	}

	auto := newKeyEnv(t, nil)
	logs.Reset()
	auto.srv.auth.listening(&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, slog.New(slog.NewTextHandler(&logs, nil)))
	if resp, body := auto.do(t, http.MethodGet, "/v1/jobs", "", ""); resp.StatusCode != 401 {
		t.Errorf("all-in-one beyond loopback with no key stored: GET = %d %s, want 401", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "auth keys: listening beyond loopback") {
		t.Errorf("startup log = %q, want the mode in force", logs.String())
	}

	open := newKeyEnv(t, nil)
	logs.Reset()
	open.srv.auth.listening(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, slog.New(slog.NewTextHandler(&logs, nil)))
	if !strings.Contains(logs.String(), "auth open: no API key was ever created, listening on loopback only") {
		t.Errorf("startup log = %q, want the open mode announced", logs.String())
	}
	if resp, body := open.do(t, http.MethodGet, "/v1/jobs", "", ""); resp.StatusCode != 200 {
		t.Errorf("all-in-one open mode: GET = %d %s, want 200", resp.StatusCode, body)
	}
}
