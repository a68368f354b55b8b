package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/internal/webhook"
)

// storeEnv is the API on the real store, for what needs Redis semantics:
// idempotency claims and compare_to selection.
type storeEnv struct {
	st    *store.Store
	rdb   redis.UniversalClient
	queue *jobtest.Queue
	url   string
}

func newStoreEnv(t *testing.T, rdb redis.UniversalClient) *storeEnv {
	t.Helper()
	env := &storeEnv{st: store.New(rdb, store.Options{}), rdb: rdb, queue: &jobtest.Queue{}}
	srv := New(Config{OpenUntilFirstKey: true, CheckURL: testservers.LoopbackOnly}, Deps{Store: env.st, Queue: env.queue, Idempotency: env.st, Selector: env.st})
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

// TestIdempotencyConcurrentPostsCreateOneJob: on a real redis-server, 20
// concurrent POSTs with one key create exactly one job.
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
	if got := len(env.queue.Tasks()); got != 1 {
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
	env.queue.SetErr(errFakeRedis)
	if status, _, _, _ := env.post(t, ptr("q"), validSpec); status != http.StatusServiceUnavailable {
		t.Errorf("POST with the queue down = %d, want 503", status)
	}
	env.queue.SetErr(nil)
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
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || len(env.store.jobs) != 0 {
		t.Errorf("POST = %d with %d jobs, want 503 and none", resp.StatusCode, len(env.store.jobs))
	}
}

// postKeyed sends a job as bearer (none when "") with an Idempotency-Key.
func postKeyed(t *testing.T, base, bearer, key, body string) (int, CreateJobResponse, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/v1/jobs", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idempotencyHeader, key)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, CreateJobResponse{}, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r CreateJobResponse
	if resp.StatusCode < 300 {
		if err := json.Unmarshal(b, &r); err != nil {
			t.Errorf("POST = %d %s: %v", resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode, r, string(b)
}

// TestIdempotencyReplayReturnsWebhookSecret: a client retries exactly when
// it lost the 202, so the replay carries the secret generated for the job
// again; never a key's own secret, and never to another key.
func TestIdempotencyReplayReturnsWebhookSecret(t *testing.T) {
	env := newKeyEnvWith(t, nil, nil)
	_, plain := env.addKey(t, "plain", false, apikey.Quota{})
	own := webhook.NewSecret()
	k, withSecret, err := apikey.New("own", false, apikey.Quota{}, own, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := env.store.AddKey(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	noWebhook := `{"targets":[{"url":"http://127.0.0.1:9/"}]}`
	tests := []struct {
		name, bearer, body string
		generated          bool
	}{
		{"generated secret", plain, webhookJob, true},
		{"no webhook", plain, noWebhook, false},
		{"key's own secret", withSecret, webhookJob, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idem := "retry-" + tt.name
			status, first, _ := postKeyed(t, env.url, tt.bearer, idem, tt.body)
			if status != http.StatusAccepted || (first.WebhookSecret != "") != tt.generated {
				t.Fatalf("first POST = %d, secret %q; want 202 with a secret %v", status, first.WebhookSecret, tt.generated)
			}
			status, again, raw := postKeyed(t, env.url, tt.bearer, idem, tt.body)
			if status != http.StatusOK || again.ID != first.ID || again.WebhookSecret != first.WebhookSecret {
				t.Errorf("replay = %d %s, secret %q; want 200 %s with secret %q", status, again.ID, again.WebhookSecret, first.ID, first.WebhookSecret)
			}
			if !tt.generated && strings.Contains(raw, "whsec_") {
				t.Errorf("replay shows a secret: %s", raw)
			}
		})
	}
	// The same Idempotency-Key under another API key is another job, and
	// the first job's secret stays with the key it was shown to.
	_, other := env.addKey(t, "other", false, apikey.Quota{})
	_, mine, _ := postKeyed(t, env.url, plain, "retry-generated secret", webhookJob)
	status, theirs, _ := postKeyed(t, env.url, other, "retry-generated secret", webhookJob)
	if status != http.StatusAccepted || theirs.ID == mine.ID || theirs.WebhookSecret == mine.WebhookSecret {
		t.Errorf("other key's POST = %d %s with secret %q; want 202, a new job and its own secret", status, theirs.ID, theirs.WebhookSecret)
	}
}

// gatedVerifier is a TargetVerifier standing in for the outbound fetches
// of target verification: CheckSpec takes delay, or until its context
// ends when block is set, and records the deadline it was given and how
// long the Idempotency-Key claim had left then.
type gatedVerifier struct {
	delay   time.Duration
	block   atomic.Bool
	entered chan struct{} // one send per CheckSpec, when set
	release chan struct{} // closed: a blocked CheckSpec gives up, so the test can end
	rdb     redis.UniversalClient

	mu        sync.Mutex
	deadlines []time.Duration // left on the context; 0: it had none
	claimTTLs []time.Duration // left on the pending claim
}

// seen returns what the CheckSpec calls so far recorded.
func (v *gatedVerifier) seen() (deadlines, claimTTLs []time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]time.Duration(nil), v.deadlines...), append([]time.Duration(nil), v.claimTTLs...)
}

func (v *gatedVerifier) Verify(_ context.Context, _ string, u *url.URL) (store.TargetHost, error) {
	return store.TargetHost{Host: u.Host, Verified: true}, nil
}

func (v *gatedVerifier) List(context.Context, string) ([]store.TargetHost, error) { return nil, nil }

func (v *gatedVerifier) CheckSpec(ctx context.Context, _ string, _ []job.TargetURL) error {
	var left, claim time.Duration
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	if keys, err := v.rdb.Keys(ctx, "benchq:idempotency:*").Result(); err == nil && len(keys) == 1 {
		claim = v.rdb.PTTL(ctx, keys[0]).Val()
	}
	v.mu.Lock()
	v.deadlines, v.claimTTLs = append(v.deadlines, left), append(v.claimTTLs, claim)
	v.mu.Unlock()
	// Read the gate before telling the test this call entered: the test
	// opens it for later calls as soon as it hears, and this one must
	// still block.
	blocked := v.block.Load()
	if v.entered != nil {
		v.entered <- struct{}{}
	}
	if blocked {
		select {
		case <-ctx.Done():
			return fmt.Errorf("fetch target: %w", ctx.Err())
		case <-v.release:
			return errors.New("fetch target: released by the test")
		}
	}
	select {
	case <-time.After(v.delay):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("fetch target: %w", ctx.Err())
	}
}

// newVerifyingEnv is the API in open mode on a real redis-server, with
// target verification done by v and the idempotency timing given (zero:
// the defaults).
func newVerifyingEnv(t *testing.T, v *gatedVerifier, timing idempotencyTiming) *storeEnv {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	v.rdb = rdb
	env := &storeEnv{st: store.New(rdb, store.Options{}), rdb: rdb, queue: &jobtest.Queue{}}
	srv := New(Config{OpenUntilFirstKey: true, CheckURL: testservers.LoopbackOnly, VerifyTargets: true},
		Deps{Store: env.st, Queue: env.queue, Idempotency: env.st, Deliveries: env.st, Selector: env.st, Targets: v})
	srv.idempotencyTiming = timing
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	env.url = hs.URL
	return env
}

// TestIdempotencyTimingOrder: the claimant creates its job under a
// deadline that ends well before its claim could expire, and requests
// waiting for it outlast that deadline, so a slow creation can neither
// free the key for a second job nor answer a waiter 409.
func TestIdempotencyTimingOrder(t *testing.T) {
	const settle = 5 * time.Second // room to record or release the claim
	// Storing and enqueueing the accepted job runs detached, up to
	// persistTimeout after the creation deadline.
	if idempotencyCreateTimeout+persistTimeout+settle > store.IdempotencyClaimTTL {
		t.Errorf("creation deadline %v + persist %v + %v to settle exceeds the claim TTL %v",
			idempotencyCreateTimeout, persistTimeout, settle, store.IdempotencyClaimTTL)
	}
	if idempotencyWait < idempotencyCreateTimeout+time.Second {
		t.Errorf("waiters give up after %v, before the creation deadline %v and a margin", idempotencyWait, idempotencyCreateTimeout)
	}
	if def := (Config{}).withDefaults().WriteTimeout; idempotencyWait >= def {
		t.Errorf("waiters wait %v, not less than the default WriteTimeout %v: their answer would be cut", idempotencyWait, def)
	}
	// What the creation path actually sees, measured inside it.
	v := &gatedVerifier{}
	env := newVerifyingEnv(t, v, idempotencyTiming{})
	if status, _, _, _ := env.post(t, ptr("k"), validSpec); status != http.StatusAccepted {
		t.Fatalf("POST = %d, want 202", status)
	}
	deadlines, claims := v.seen()
	if len(deadlines) != 1 {
		t.Fatalf("verifications = %d, want 1", len(deadlines))
	}
	left, claim := deadlines[0], claims[0]
	if left <= 0 || left > idempotencyCreateTimeout {
		t.Errorf("creation context deadline in %v, want within %v", left, idempotencyCreateTimeout)
	}
	if claim < left+settle {
		t.Errorf("claim had %v left while creation had %v: under %v to settle it", claim, left, settle)
	}
}

// TestIdempotencyWaitersOutlastSlowCreation: concurrent POSTs with one key
// and a target verification that takes longer than the 5 s the waiters once
// gave up after: every concurrent request still gets the one job.
func TestIdempotencyWaitersOutlastSlowCreation(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 5.5 s")
	}
	v := &gatedVerifier{delay: 5500 * time.Millisecond}
	env := newVerifyingEnv(t, v, idempotencyTiming{})
	const n = 20
	statuses := make(chan int, n)
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			status, jr, p, _ := env.post(t, ptr("slow"), validSpec)
			if status != http.StatusOK && status != http.StatusAccepted {
				t.Errorf("POST = %d %+v", status, p)
			}
			statuses <- status
			ids <- jr.ID
		})
	}
	wg.Wait()
	close(statuses)
	close(ids)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	if counts[http.StatusAccepted] != 1 || counts[http.StatusOK] != n-1 || len(seen) != 1 {
		t.Errorf("statuses = %v, job ids %v; want one 202, %d 200 and one job", counts, seen, n-1)
	}
	if got, checks := env.jobCount(t), len(first(v.seen())); got != 1 || checks != 1 {
		t.Errorf("jobs = %d after %d verifications, want 1 and 1", got, checks)
	}
}

// TestIdempotencyCreationDeadline: a creation that would never end is cut
// at the deadline with a 503 and frees the key; a request waiting for it
// then creates the job itself instead of getting a 409.
func TestIdempotencyCreationDeadline(t *testing.T) {
	v := &gatedVerifier{entered: make(chan struct{}, 2), release: make(chan struct{})}
	v.block.Store(true)
	timing := idempotencyTiming{create: 300 * time.Millisecond, wait: 2 * time.Second}
	env := newVerifyingEnv(t, v, timing)
	t.Cleanup(func() { close(v.release) }) // before the server closes
	first := make(chan int, 1)
	start := time.Now()
	go func() {
		status, _, p, _ := env.post(t, ptr("k"), validSpec)
		if p.Type != problemBase+"unavailable" {
			t.Errorf("cut POST problem = %+v, want unavailable", p)
		}
		first <- status
	}()
	select {
	case <-v.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first POST never reached target verification")
	}
	v.block.Store(false) // the waiter's own verification answers
	status, jr, p, _ := env.post(t, ptr("k"), validSpec)
	if status != http.StatusAccepted || jr.ID == "" {
		t.Errorf("waiting POST = %d %+v, want 202: the key came back when the first was cut", status, p)
	}
	var cut int
	select {
	case cut = <-first:
	case <-time.After(10 * time.Second):
		t.Fatal("the first POST was never answered")
	}
	if cut != http.StatusServiceUnavailable {
		t.Errorf("POST whose creation hung = %d, want 503", cut)
	}
	if took := time.Since(start); took > timing.create+time.Second {
		t.Errorf("the hung creation ended after %v, want about %v", took, timing.create)
	}
	if got := env.jobCount(t); got != 1 {
		t.Errorf("jobs = %d, want 1", got)
	}
	if status, again, _, _ := env.post(t, ptr("k"), validSpec); status != http.StatusOK || again.ID != jr.ID {
		t.Errorf("replay = %d %s, want 200 %s", status, again.ID, jr.ID)
	}
}

func first[T any](a, _ T) T { return a }
