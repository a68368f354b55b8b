package api

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// storeEnv is the API on the real store, for what needs Redis semantics:
// idempotency claims and compare_to selection.
type storeEnv struct {
	st    *store.Store
	rdb   redis.UniversalClient
	queue *fakeQueue
	url   string
}

func newStoreEnv(t *testing.T, rdb redis.UniversalClient) *storeEnv {
	t.Helper()
	env := &storeEnv{st: store.New(rdb, store.Options{}), rdb: rdb, queue: &fakeQueue{}}
	srv := New(Config{CheckURL: loopbackOnly}, Deps{Store: env.st, Queue: env.queue, Idempotency: env.st, Selector: env.st})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	env.url = hs.URL
	return env
}

func miniEnv(t *testing.T) (*storeEnv, *miniredis.Miniredis) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return newStoreEnv(t, rdb), mr
}

// post sends a job with an Idempotency-Key (none when key is nil) and
// returns the status and the job id or problem.
func (e *storeEnv) post(t *testing.T, key *string, body string) (int, JobResponse, Problem, *http.Response) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/v1/jobs", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, JobResponse{}, Problem{}, nil
	}
	req.Header.Set("Content-Type", "application/json")
	if key != nil {
		req.Header.Set(idempotencyHeader, *key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, JobResponse{}, Problem{}, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var jr JobResponse
	var p Problem
	if resp.StatusCode < 300 {
		err = json.Unmarshal(b, &jr)
	} else {
		err = json.Unmarshal(b, &p)
	}
	if err != nil {
		t.Errorf("POST = %d %s: %v", resp.StatusCode, b, err)
	}
	return resp.StatusCode, jr, p, resp
}

func (e *storeEnv) jobCount(t *testing.T) int {
	t.Helper()
	jobs, _, err := e.st.ListJobs(t.Context(), store.ListFilter{Limit: store.MaxListLimit})
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

func ptr(s string) *string { return &s }

// TestIdempotencyConcurrentPostsCreateOneJob is issue 6's item 4, on a real
// redis-server: 20 concurrent POSTs with one key create exactly one job.
func TestIdempotencyConcurrentPostsCreateOneJob(t *testing.T) {
	env := newStoreEnv(t, redistest.Start(t).Client(t))
	const n = 20
	type answer struct {
		status int
		id     string
		replay string
	}
	answers := make(chan answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, jr, _, resp := env.post(t, ptr("ci-run-42"), validSpec)
			if resp != nil {
				answers <- answer{status, jr.ID, resp.Header.Get("Idempotent-Replayed")}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(answers)
	counts := map[int]int{}
	ids := map[string]bool{}
	for a := range answers {
		counts[a.status]++
		ids[a.id] = true
		if (a.status == http.StatusOK) != (a.replay == "true") {
			t.Errorf("status %d with Idempotent-Replayed %q", a.status, a.replay)
		}
	}
	if counts[http.StatusAccepted] != 1 || counts[http.StatusOK] != n-1 {
		t.Errorf("statuses = %v, want one 202 and %d 200", counts, n-1)
	}
	if len(ids) != 1 || ids[""] {
		t.Errorf("job ids answered = %v, want one", ids)
	}
	if got := env.jobCount(t); got != 1 {
		t.Errorf("jobs stored = %d, want 1", got)
	}
	if got := len(env.queue.tasks); got != 1 {
		t.Errorf("tasks enqueued = %d, want 1", got)
	}
	keys, err := env.rdb.Keys(t.Context(), "benchq:idempotency:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("idempotency keys = %v, %v; want 1", keys, err)
	}
	if ttl := env.rdb.TTL(t.Context(), keys[0]).Val(); ttl <= 24*time.Hour-time.Minute || ttl > 24*time.Hour {
		t.Errorf("idempotency key TTL = %v, want 24h", ttl)
	}
}

func TestIdempotencyDifferentBodyConflicts(t *testing.T) {
	env, _ := miniEnv(t)
	status, first, _, _ := env.post(t, ptr("k"), validSpec)
	if status != http.StatusAccepted {
		t.Fatalf("first POST = %d, want 202", status)
	}
	other := strings.Replace(validSpec, `"name":"t"`, `"name":"u"`, 1)
	status, _, p, _ := env.post(t, ptr("k"), other)
	if status != http.StatusConflict || p.Type != problemBase+"idempotency-conflict" || p.Field != idempotencyHeader {
		t.Errorf("POST with another body = %d %+v, want 409 idempotency-conflict naming %s", status, p, idempotencyHeader)
	}
	// Whitespace is a different body too: the hash is over the raw bytes.
	status, _, _, _ = env.post(t, ptr("k"), validSpec+" ")
	if status != http.StatusConflict {
		t.Errorf("POST with trailing space = %d, want 409", status)
	}
	// Another key, or none, is another job.
	if status, jr, _, _ := env.post(t, ptr("k2"), validSpec); status != http.StatusAccepted || jr.ID == first.ID {
		t.Errorf("POST with another key = %d %s, want 202 with a new job", status, jr.ID)
	}
	if status, _, _, _ := env.post(t, nil, validSpec); status != http.StatusAccepted {
		t.Errorf("POST without a key = %d, want 202", status)
	}
	if got := env.jobCount(t); got != 3 {
		t.Errorf("jobs stored = %d, want 3", got)
	}
}

func TestIdempotencyKeyExpiresAfter24h(t *testing.T) {
	env, mr := miniEnv(t)
	_, first, _, _ := env.post(t, ptr("k"), validSpec)
	mr.FastForward(24*time.Hour - time.Second)
	if status, jr, _, _ := env.post(t, ptr("k"), validSpec); status != http.StatusOK || jr.ID != first.ID {
		t.Errorf("POST 1 s before 24 h = %d %s, want 200 %s", status, jr.ID, first.ID)
	}
	mr.FastForward(2 * time.Second)
	if status, jr, _, _ := env.post(t, ptr("k"), validSpec); status != http.StatusAccepted || jr.ID == first.ID {
		t.Errorf("POST after 24 h = %d %s, want 202 with a new job", status, jr.ID)
	}
}

// A request that creates no job frees its key: the corrected retry goes
// through, and the bad one is refused again rather than replayed.
func TestIdempotencyFailedRequestFreesKey(t *testing.T) {
	env, _ := miniEnv(t)
	bad := `{"targets":[{"url":"http://127.0.0.1:9000/"}],"sweep":{"concurrency":[0],"requests":[10]}}`
	for range 2 {
		if status, _, p, _ := env.post(t, ptr("k"), bad); status != http.StatusUnprocessableEntity || p.Field != "sweep.concurrency[0]" {
			t.Errorf("invalid POST = %d %+v, want 422", status, p)
		}
	}
	if status, _, _, _ := env.post(t, ptr("k"), validSpec); status != http.StatusAccepted {
		t.Errorf("corrected POST = %d, want 202", status)
	}
	env.queue.err = errFakeRedis
	if status, _, _, _ := env.post(t, ptr("q"), validSpec); status != http.StatusServiceUnavailable {
		t.Errorf("POST with the queue down = %d, want 503", status)
	}
	env.queue.err = nil
	if status, _, _, _ := env.post(t, ptr("q"), validSpec); status != http.StatusAccepted {
		t.Errorf("retry after the queue came back = %d, want 202", status)
	}
}

func TestIdempotencyKeyHeaderChecked(t *testing.T) {
	env, _ := miniEnv(t)
	for name, key := range map[string]string{
		"empty":     "",
		"too long":  strings.Repeat("k", 256),
		"non-ASCII": "clé",
		"tab":       "a\tb",
	} {
		if status, _, p, _ := env.post(t, &key, validSpec); status != http.StatusBadRequest || p.Field != idempotencyHeader || p.Type != problemBase+"bad-idempotency-key" {
			t.Errorf("%s key: POST = %d %+v, want 400 naming %s", name, status, p, idempotencyHeader)
		}
	}
	if status, _, _, _ := env.post(t, ptr(strings.Repeat("k", 255)), validSpec); status != http.StatusAccepted {
		t.Errorf("255-character key: POST = %d, want 202", status)
	}
	if got := env.jobCount(t); got != 1 {
		t.Errorf("jobs stored = %d, want 1", got)
	}
}

// Without an idempotency store the header is refused, never ignored: a
// retry must not silently create a second job.
func TestIdempotencyWithoutStoreRefuses(t *testing.T) {
	env := newTestEnv(t, nil)
	req, _ := http.NewRequest(http.MethodPost, env.url+"/v1/jobs", strings.NewReader(validSpec))
	req.Header.Set(idempotencyHeader, "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || len(env.store.jobs) != 0 {
		t.Errorf("POST = %d with %d jobs, want 503 and none", resp.StatusCode, len(env.store.jobs))
	}
}
