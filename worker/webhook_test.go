package worker_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/webhook"
	"github.com/benchq/benchq/worker"
)

// hit is one request a receiver got.
type hit struct {
	at       time.Time
	header   http.Header
	body     []byte
	verified error // what the independent Standard Webhooks library said
}

// receiver is a loopback webhook endpoint that verifies every request with
// github.com/standard-webhooks/standard-webhooks/libraries (not our
// signer) and answers from a script: answers[i] for request i, the last
// one repeating.
type receiver struct {
	url     string
	mu      sync.Mutex
	hits    []hit
	arrived chan struct{}
}

type answer struct {
	code       int
	retryAfter string
}

func startReceiver(t *testing.T, secret string, answers ...answer) *receiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{arrived: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		h := hit{at: time.Now(), header: r.Header.Clone(), body: body, verified: wh.Verify(body, r.Header)}
		a := answers[min(len(rc.hits), len(answers)-1)]
		rc.hits = append(rc.hits, h)
		rc.mu.Unlock()
		rc.arrived <- struct{}{}
		if h.verified != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if a.retryAfter != "" {
			w.Header().Set("Retry-After", a.retryAfter)
		}
		w.WriteHeader(a.code)
		_, _ = io.WriteString(w, "answer "+strconv.Itoa(a.code))
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL + "/hooks/benchq"
	return rc
}

func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// startWebhooks runs the job worker, told by a WebhookNotifier, and the
// webhook delivery server with schedule until the test ends.
func (e *env) startWebhooks(t *testing.T, schedule webhook.Schedule) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	notifier := worker.NewWebhookNotifier(e.st, e.queue, worker.NotifierConfig{Schedule: schedule, LinkBase: "http://benchq.test", Logger: e.log})
	w := worker.New(e.rdb, e.st, worker.Config{Logger: e.log, ShutdownTimeout: 2 * time.Second, Notifier: notifier})
	hooks := worker.NewWebhooks(e.rdb, e.st, worker.WebhookConfig{Schedule: schedule, Logger: e.log})
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{w.Run, hooks.Run} {
		wg.Go(func() {
			if err := run(ctx); err != nil {
				t.Errorf("Run = %v", err)
			}
		})
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// submitWithWebhook stores and enqueues a small job whose webhook goes to
// url with events, signed with secret, as the API does.
func (e *env) submitWithWebhook(t *testing.T, url, secret string, events ...string) *job.Job {
	t.Helper()
	spec := closedSpec([]int{1}, []int{10}, 1, startTarget(t, 0))
	spec.Webhook = &job.Webhook{URL: url, Events: events}
	j, task := e.create(t, spec)
	if err := e.st.SetWebhookSecret(t.Context(), j.ID, secret); err != nil {
		t.Fatal(err)
	}
	e.enqueue(t, task)
	return j
}

// waitDeliveries polls the job's deliveries until cond holds.
func (e *env) waitDeliveries(t *testing.T, id string, limit time.Duration, what string, cond func([]store.DeliveryLog) bool) []store.DeliveryLog {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		logs, err := e.st.Deliveries(t.Context(), id)
		if err != nil {
			t.Fatalf("Deliveries(%s) = %v", id, err)
		}
		if cond(logs) {
			return logs
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(logs, "", "  ")
			t.Fatalf("job %s: %s not reached within %v; deliveries:\n%s", id, what, limit, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func settled(status webhook.Status) func([]store.DeliveryLog) bool {
	return func(logs []store.DeliveryLog) bool {
		for _, l := range logs {
			if l.Status != status {
				return false
			}
		}
		return len(logs) > 0
	}
}

// TestWebhookEndToEnd: a job with a webhook runs on a real worker; the
// job.started and job.succeeded messages reach a loopback receiver that
// verifies them with the independent Standard Webhooks library.
func TestWebhookEndToEnd(t *testing.T) {
	e := newEnv(t)
	secret := webhook.NewSecret()
	rc := startReceiver(t, secret, answer{code: 200})
	e.startWebhooks(t, webhook.Schedule{100 * time.Millisecond})
	j := e.submitWithWebhook(t, rc.url, secret, job.EventStarted, job.EventSucceeded)

	logs := e.waitDeliveries(t, j.ID, 15*time.Second, "2 deliveries delivered", func(l []store.DeliveryLog) bool {
		return len(l) == 2 && settled(webhook.StatusDelivered)(l)
	})
	hits := rc.got()
	if len(hits) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(hits))
	}
	types := map[string]webhook.Payload{}
	for i, h := range hits {
		if h.verified != nil {
			t.Errorf("request %d: Standard Webhooks verification = %v", i, h.verified)
		}
		var p webhook.Payload
		if err := json.Unmarshal(h.body, &p); err != nil {
			t.Fatalf("request %d body %s: %v", i, h.body, err)
		}
		types[p.Type] = p
	}
	done, ok := types[job.EventSucceeded]
	if _, started := types[job.EventStarted]; !ok || !started {
		t.Fatalf("receiver got %v, want job.started and job.succeeded", types)
	}
	d := done.Data
	if d.JobID != j.ID || d.Status != job.StatusSucceeded || d.Verdict != job.VerdictNone || d.RunsDone != 1 || d.RunsTotal != 1 ||
		len(d.Points) != 1 || d.Points[0].MeanRPS <= 0 || d.Links.Self != "http://benchq.test/v1/jobs/"+j.ID || d.FinishedAt == nil {
		t.Errorf("job.succeeded data = %+v", d)
	}
	for _, l := range logs {
		if len(l.Attempts) != 1 || l.Attempts[0].StatusCode != 200 || l.Attempts[0].Response != "answer 200" {
			t.Errorf("delivery %d attempts = %+v, want one 200", l.N, l.Attempts)
		}
	}

	// The same library rejects a tampered body and a stale timestamp.
	wh, _ := standardwebhooks.NewWebhook(secret)
	h := hits[0]
	tampered := strings.Replace(string(h.body), j.ID, "01JC3W9Q5V1ZK2M4N6P8R0T2V4", 1)
	if err := wh.Verify([]byte(tampered), h.header); err == nil {
		t.Error("Verify(tampered body) = nil, want an error")
	}
	stale := h.header.Clone()
	stale.Set("webhook-timestamp", strconv.FormatInt(time.Now().Add(-6*time.Minute).Unix(), 10))
	if err := wh.Verify(h.body, stale); err == nil {
		t.Error("Verify(timestamp 6 minutes old) = nil, want an error")
	}
}

// TestWebhookRetriesUntilDelivered: 500, 500, 500, then 200 — four
// attempts logged, the same webhook-id on each, each signed anew.
func TestWebhookRetriesUntilDelivered(t *testing.T) {
	e := newEnv(t)
	secret := webhook.NewSecret()
	rc := startReceiver(t, secret, answer{code: 500}, answer{code: 500}, answer{code: 500}, answer{code: 200})
	schedule := webhook.Schedule{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	e.startWebhooks(t, schedule)
	j := e.submitWithWebhook(t, rc.url, secret)

	logs := e.waitDeliveries(t, j.ID, 15*time.Second, "delivered", settled(webhook.StatusDelivered))
	if len(logs) != 1 {
		t.Fatalf("%d deliveries, want 1 (job.succeeded)", len(logs))
	}
	var codes []int
	for _, a := range logs[0].Attempts {
		codes = append(codes, a.StatusCode)
	}
	if want := []int{500, 500, 500, 200}; !equalInts(codes, want) {
		t.Errorf("attempt status codes = %v, want %v", codes, want)
	}
	hits := rc.got()
	if len(hits) != 4 {
		t.Fatalf("receiver got %d requests, want 4", len(hits))
	}
	for i, h := range hits {
		if id := h.header.Get("webhook-id"); id != logs[0].ID || !strings.HasPrefix(id, "msg_") {
			t.Errorf("request %d webhook-id = %q, want %q every time", i, id, logs[0].ID)
		}
		if h.verified != nil {
			t.Errorf("request %d: verification = %v", i, h.verified)
		}
		if i > 0 {
			// No lower bound on the gap: asynq files retries by whole
			// seconds, so a 100ms wait may end at once.
			if string(h.body) != string(hits[0].body) {
				t.Errorf("request %d body differs from the first", i)
			}
		}
	}
}

// TestWebhookGoneStopsRetries: a 410 ends the delivery after one attempt
// and asynq archives the task at once.
func TestWebhookGoneStopsRetries(t *testing.T) {
	e := newEnv(t)
	secret := webhook.NewSecret()
	rc := startReceiver(t, secret, answer{code: http.StatusGone})
	e.startWebhooks(t, webhook.Schedule{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond})
	j := e.submitWithWebhook(t, rc.url, secret)

	e.waitDeliveries(t, j.ID, 15*time.Second, "gone", settled(webhook.StatusGone))
	waitArchived(t, e, 1)
	logs, _ := e.st.Deliveries(t.Context(), j.ID)
	if len(logs) != 1 || len(logs[0].Attempts) != 1 || logs[0].Attempts[0].Outcome != webhook.OutcomeGone {
		t.Errorf("deliveries = %+v, want one with a single gone attempt", logs)
	}
	if n := len(rc.got()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
}

// TestWebhookFailsAfterSchedule: a receiver that always fails gets one
// attempt plus one per schedule entry; the delivery ends failed and
// archived.
func TestWebhookFailsAfterSchedule(t *testing.T) {
	e := newEnv(t)
	secret := webhook.NewSecret()
	rc := startReceiver(t, secret, answer{code: 502})
	e.startWebhooks(t, webhook.Schedule{50 * time.Millisecond, 50 * time.Millisecond})
	j := e.submitWithWebhook(t, rc.url, secret)

	e.waitDeliveries(t, j.ID, 15*time.Second, "failed", settled(webhook.StatusFailed))
	waitArchived(t, e, 1)
	logs, _ := e.st.Deliveries(t.Context(), j.ID)
	if len(logs[0].Attempts) != 3 || len(rc.got()) != 3 {
		t.Errorf("%d attempts logged, %d received; want 3 (1 + 2 retries)", len(logs[0].Attempts), len(rc.got()))
	}
}

// TestWebhookHonoursRetryAfter: a 429 with Retry-After: 1 delays the next
// attempt by at least a second although the schedule says 50ms.
func TestWebhookHonoursRetryAfter(t *testing.T) {
	e := newEnv(t)
	secret := webhook.NewSecret()
	rc := startReceiver(t, secret, answer{code: http.StatusTooManyRequests, retryAfter: "1"}, answer{code: 200})
	e.startWebhooks(t, webhook.Schedule{50 * time.Millisecond, 5 * time.Second})
	j := e.submitWithWebhook(t, rc.url, secret)

	logs := e.waitDeliveries(t, j.ID, 15*time.Second, "delivered", settled(webhook.StatusDelivered))
	hits := rc.got()
	if len(hits) != 2 {
		t.Fatalf("receiver got %d requests, want 2", len(hits))
	}
	if gap := hits[1].at.Sub(hits[0].at); gap < time.Second || gap > 4*time.Second {
		t.Errorf("second attempt %v after a Retry-After: 1, want at least 1s (and not the 5s cap)", gap)
	}
	if a := logs[0].Attempts[0]; a.StatusCode != 429 || a.RetryAfterMs != 1000 {
		t.Errorf("first attempt = %+v, want 429 with retry_after_ms 1000", a)
	}
}

// TestWebhookCanceledWhileQueued: a job canceled before a worker took it
// still sends its job.canceled webhook.
func TestWebhookCanceledWhileQueued(t *testing.T) {
	e := newEnv(t)
	secret := webhook.NewSecret()
	rc := startReceiver(t, secret, answer{code: 204})
	spec := closedSpec([]int{1}, []int{10}, 1, startTarget(t, 0))
	spec.Webhook = &job.Webhook{URL: rc.url}
	j, task := e.create(t, spec)
	if err := e.st.SetWebhookSecret(t.Context(), j.ID, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.RequestCancel(t.Context(), j.ID); err != nil {
		t.Fatal(err)
	}
	e.enqueue(t, task)
	e.startWebhooks(t, webhook.Schedule{50 * time.Millisecond})
	logs := e.waitDeliveries(t, j.ID, 15*time.Second, "delivered", settled(webhook.StatusDelivered))
	if len(logs) != 1 || logs[0].Event != job.EventCanceled {
		t.Errorf("deliveries = %+v, want one job.canceled", logs)
	}
}

// TestWebhookAttemptTimesOut runs one attempt against a receiver that
// never answers with the real 10 s timeout: the attempt is logged as a
// timeout lasting 10 to 12 s.
func TestWebhookAttemptTimesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 10 s")
	}
	t.Parallel()
	e := newEnv(t)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })

	spec := closedSpec([]int{1}, []int{10}, 1, startTarget(t, 0))
	spec.Webhook = &job.Webhook{URL: srv.URL}
	j, _ := e.create(t, spec)
	if err := e.st.SetWebhookSecret(t.Context(), j.ID, webhook.NewSecret()); err != nil {
		t.Fatal(err)
	}
	d := &webhook.Delivery{JobID: j.ID, ID: webhook.NewMessageID(), Event: job.EventSucceeded, URL: srv.URL,
		Status: webhook.StatusPending, MaxRetry: 3, Payload: json.RawMessage(`{}`)}
	if err := e.st.CreateDelivery(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	task, _ := queue.NewWebhookDeliverTask(j.ID, d.N, 3)
	err := worker.NewDeliverer(e.st, worker.WebhookConfig{Logger: e.log}).HandleWebhookDeliver(t.Context(), task)
	if err == nil {
		t.Fatal("HandleWebhookDeliver = nil, want an error to retry")
	}
	logs, _ := e.st.Deliveries(t.Context(), j.ID)
	if len(logs) != 1 || len(logs[0].Attempts) != 1 {
		t.Fatalf("deliveries = %+v, want one attempt", logs)
	}
	a := logs[0].Attempts[0]
	if !strings.HasPrefix(a.Error, "timeout") || a.StatusCode != 0 || a.DurationMs < 10000 || a.DurationMs > 12000 {
		t.Errorf("attempt = %+v, want a timeout after 10..12 s", a)
	}
}

func waitArchived(t *testing.T, e *env, want int) {
	t.Helper()
	insp := asynq.NewInspectorFromRedisClient(e.rdb)
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks, err := insp.ListArchivedTasks(queue.QueueWebhooks)
		if err == nil && len(tasks) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("archived webhook tasks = %d, %v; want %d", len(tasks), err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
