package worker_test

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/benchq/benchq/internal/testservers"
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
	spec := closedSpec([]int{1}, []int{10}, 1, testservers.StartTarget(t, "hello benchq", 0))
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
		len(d.Points) != 1 || d.Points[0].MeanRPS == nil || *d.Points[0].MeanRPS <= 0 || d.Links.Self != "http://benchq.test/v1/jobs/"+j.ID || d.FinishedAt == nil {
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
	spec := closedSpec([]int{1}, []int{10}, 1, testservers.StartTarget(t, "hello benchq", 0))
	spec.Webhook = &job.Webhook{URL: rc.url}
	j, task := e.create(t, spec)
	if err := e.st.SetWebhookSecret(t.Context(), j.ID, secret); err != nil {
		t.Fatal(err)
	}
	if _, err := e.requestCancel(t.Context(), j.ID); err != nil {
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

	spec := closedSpec([]int{1}, []int{10}, 1, testservers.StartTarget(t, "hello benchq", 0))
	spec.Webhook = &job.Webhook{URL: srv.URL}
	j, _ := e.create(t, spec)
	if err := e.st.SetWebhookSecret(t.Context(), j.ID, webhook.NewSecret()); err != nil {
		t.Fatal(err)
	}
	d := &webhook.Delivery{JobID: j.ID, ID: webhook.MessageID(j.ID, job.EventSucceeded), Event: job.EventSucceeded, URL: srv.URL,
		Status: webhook.StatusPending, MaxRetry: 3, Payload: json.RawMessage(`{}`)}
	if _, err := e.st.CreateDelivery(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	task, _ := queue.NewWebhookDeliverTask(j.ID, j.Owner, d.N, 0, 3)
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

// TestWebhookEachAttemptSignedAnew: every attempt carries its own
// webhook-timestamp, from the sender's clock, and a signature computed for
// that timestamp (checked against the independent library's Sign), under
// the one webhook-id.
func TestWebhookEachAttemptSignedAnew(t *testing.T) {
	e := newEnv(t)
	secret := webhook.NewSecret()
	rc := startReceiver(t, secret, answer{code: 500}, answer{code: 503}, answer{code: 200})
	spec := closedSpec([]int{1}, []int{10}, 1, testservers.StartTarget(t, "hello benchq", 0))
	spec.Webhook = &job.Webhook{URL: rc.url}
	j, _ := e.create(t, spec)
	if err := e.st.SetWebhookSecret(t.Context(), j.ID, secret); err != nil {
		t.Fatal(err)
	}
	d := &webhook.Delivery{JobID: j.ID, ID: webhook.MessageID(j.ID, job.EventSucceeded), Event: job.EventSucceeded, URL: rc.url,
		Status: webhook.StatusPending, MaxRetry: 3, Payload: json.RawMessage(`{"type":"job.succeeded"}`)}
	if _, err := e.st.CreateDelivery(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	task, err := queue.NewWebhookDeliverTask(j.ID, j.Owner, d.N, 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Attempts 90 s apart, all within the receiver's 5-minute tolerance.
	t0 := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 90 * time.Second) }
	calls := 0
	clock := func() time.Time { c := at(calls); calls++; return c }
	dl := worker.NewDeliverer(e.st, worker.WebhookConfig{Logger: e.log, Now: clock})
	for range 3 {
		_ = dl.HandleWebhookDeliver(t.Context(), task) // called in sequence, as asynq retries
	}

	hits := rc.got()
	if len(hits) != 3 {
		t.Fatalf("receiver got %d requests, want 3", len(hits))
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	sigs := map[string]bool{}
	for i, h := range hits {
		want, _ := wh.Sign(d.ID, at(i), h.body)
		if ts := h.header.Get("webhook-timestamp"); ts != strconv.FormatInt(at(i).Unix(), 10) {
			t.Errorf("attempt %d webhook-timestamp = %s, want %d (the clock at that attempt)", i+1, ts, at(i).Unix())
		}
		if sig := h.header.Get("webhook-signature"); sig != want {
			t.Errorf("attempt %d webhook-signature = %s, want %s (signed for its own timestamp)", i+1, sig, want)
		}
		if h.verified != nil || h.header.Get("webhook-id") != d.ID {
			t.Errorf("attempt %d: id %s, verification %v", i+1, h.header.Get("webhook-id"), h.verified)
		}
		sigs[h.header.Get("webhook-signature")] = true
	}
	if len(sigs) != 3 {
		t.Errorf("3 attempts carry %d distinct signatures, want 3", len(sigs))
	}
	logs, _ := e.st.Deliveries(t.Context(), j.ID)
	if len(logs) != 1 || len(logs[0].Attempts) != 3 || logs[0].Status != webhook.StatusDelivered {
		t.Fatalf("deliveries = %+v, want one delivered after 3 attempts", logs)
	}
	for i, a := range logs[0].Attempts {
		if !a.At.Equal(at(i)) {
			t.Errorf("attempt %d logged at %v, want %v", i+1, a.At, at(i))
		}
	}
}

// handBackMidRun runs task on r until the job's run is under way, then
// ends the attempt as asynq does at a timeout: the job is handed back,
// queued again with its StartedAt kept.
func (e *env) handBackMidRun(t *testing.T, r *worker.Runner, task *asynq.Task, id string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.HandleJobRun(ctx, task) }()
	e.waitJob(t, id, 20*time.Second, "a run under way", func(j *job.Job) bool {
		return j.Status == job.StatusRunning && j.Progress.RequestsDone > 0
	})
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, worker.ErrHandedBack) {
			t.Fatalf("interrupted HandleJobRun = %v, want ErrHandedBack", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("HandleJobRun did not return within 10 s of its context ending")
	}
	if j, err := e.st.GetJob(t.Context(), id); err != nil || j.Status != job.StatusQueued || j.StartedAt == nil {
		t.Fatalf("after the hand-back: %+v, %v; want queued with StartedAt set", j, err)
	}
}

// TestWebhookOncePerEventAcrossAttempts: however a job:run task's
// attempts go (handed back, canceled while queued again, retried after
// the job finished, a notify lost to a crash), each subscribed event is
// delivered exactly once, under its own deterministic webhook-id.
func TestWebhookOncePerEventAcrossAttempts(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		// attempts plays the job:run task's attempts with the runner that
		// notifies and the one that crashes before it can.
		attempts func(t *testing.T, e *env, notifying, crashing *worker.Runner, task *asynq.Task, id string)
	}{
		{
			name:   "hand-back then cancel",
			events: []string{job.EventStarted, job.EventCanceled},
			attempts: func(t *testing.T, e *env, r, _ *worker.Runner, task *asynq.Task, id string) {
				e.handBackMidRun(t, r, task, id)
				if _, err := e.requestCancel(t.Context(), id); err != nil {
					t.Fatal(err)
				}
				mustHandle(t, r, task, 2) // the retry finds it canceled while queued
			},
		},
		{
			name:   "hand-back then resume",
			events: []string{job.EventStarted, job.EventSucceeded},
			attempts: func(t *testing.T, e *env, r, _ *worker.Runner, task *asynq.Task, id string) {
				e.handBackMidRun(t, r, task, id)
				mustHandle(t, r, task, 2) // resumes, finishes, then a retry finds it over
			},
		},
		{
			name:   "job.started lost to a crash",
			events: []string{job.EventStarted, job.EventSucceeded},
			attempts: func(t *testing.T, e *env, r, _ *worker.Runner, task *asynq.Task, id string) {
				// An attempt died between starting the job and notifying.
				if _, err := e.st.UpdateJob(t.Context(), id, func(j *job.Job) error {
					return j.Transition(job.StatusRunning, time.Now().UTC())
				}); err != nil {
					t.Fatal(err)
				}
				mustHandle(t, r, task, 2) // the retry resumes it, then one finds it over
			},
		},
		{
			name:   "notify lost between finish and ack",
			events: []string{job.EventSucceeded},
			attempts: func(t *testing.T, e *env, r, crashing *worker.Runner, task *asynq.Task, id string) {
				mustHandle(t, crashing, task, 1) // finishes the job, never notifies
				mustHandle(t, r, task, 2)        // the retries after the crash
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			secret := webhook.NewSecret()
			rc := startReceiver(t, secret, answer{code: 200})
			spec := closedSpec([]int{1}, []int{1000}, 1, testservers.StartTarget(t, "hello benchq", time.Millisecond))
			spec.Webhook = &job.Webhook{URL: rc.url, Events: tt.events}
			j, task := e.create(t, spec)
			if err := e.st.SetWebhookSecret(t.Context(), j.ID, secret); err != nil {
				t.Fatal(err)
			}
			notifier := worker.NewWebhookNotifier(e.st, e.queue, worker.NotifierConfig{Schedule: webhook.Schedule{50 * time.Millisecond}, Logger: e.log})
			notifying := worker.NewRunner(e.st, worker.Config{Logger: e.log, Notifier: notifier})
			crashing := worker.NewRunner(e.st, worker.Config{Logger: e.log})
			tt.attempts(t, e, notifying, crashing, task, j.ID)

			pending, err := asynq.NewInspectorFromRedisClient(e.rdb).ListPendingTasks(queue.QueueWebhooks)
			if err != nil || len(pending) != len(tt.events) {
				t.Errorf("webhook tasks queued = %d, %v; want %d, one per event", len(pending), err, len(tt.events))
			}
			hooks := worker.NewWebhooks(e.rdb, e.st, worker.WebhookConfig{Schedule: webhook.Schedule{50 * time.Millisecond}, Logger: e.log})
			if err := hooks.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(hooks.Shutdown)
			logs := e.waitDeliveries(t, j.ID, 15*time.Second, "every delivery delivered", func(l []store.DeliveryLog) bool {
				return len(l) == len(tt.events) && settled(webhook.StatusDelivered)(l)
			})
			mustHandle(t, notifying, task, 1) // one more retry after delivery sends nothing
			for i, l := range logs {
				if l.Event != tt.events[i] || l.ID != webhook.MessageID(j.ID, tt.events[i]) || len(l.Attempts) != 1 {
					t.Errorf("delivery %d = %s %s with %d attempts, want %s %s with 1", l.N, l.Event, l.ID, len(l.Attempts), tt.events[i], webhook.MessageID(j.ID, tt.events[i]))
				}
			}
			if logs, _ := e.st.Deliveries(t.Context(), j.ID); len(logs) != len(tt.events) {
				t.Errorf("%d deliveries after the last retry, want %d", len(logs), len(tt.events))
			}
			hits := rc.got()
			var got []string
			for _, h := range hits {
				got = append(got, h.header.Get("webhook-id"))
			}
			if len(hits) != len(tt.events) {
				t.Errorf("receiver got %d requests (%v), want %d: %v", len(hits), got, len(tt.events), tt.events)
			}
		})
	}
}

// mustHandle runs task on r n times, each to a nil return: the job is
// over, as a retried job:run attempt finds it.
func mustHandle(t *testing.T, r *worker.Runner, task *asynq.Task, n int) {
	t.Helper()
	for i := range n {
		if err := r.HandleJobRun(t.Context(), task); err != nil {
			t.Fatalf("HandleJobRun #%d = %v, want nil", i+1, err)
		}
	}
}

// failingQueue refuses every enqueue.
type failingQueue struct{ calls int }

func (q *failingQueue) EnqueueContext(context.Context, *asynq.Task, ...asynq.Option) (*asynq.TaskInfo, error) {
	q.calls++
	return nil, errors.New("dial tcp 127.0.0.1:6379: connection refused")
}

// TestNotifierNeverLeavesDeliveryStuck: a delivery whose task could not be
// enqueued is marked failed, so it can be redelivered; one left pending
// without a task (a crash between the two writes) gets its task from the
// next notify, and only one however often notify runs.
func TestNotifierNeverLeavesDeliveryStuck(t *testing.T) {
	e := newEnv(t)
	spec := closedSpec([]int{1}, []int{10}, 1, testservers.StartTarget(t, "hello benchq", 0))
	spec.Webhook = &job.Webhook{URL: "http://127.0.0.1:9/hooks"} // never called: no delivery server runs
	j, _ := e.create(t, spec)
	cfg := worker.NotifierConfig{Schedule: webhook.Schedule{time.Second}, Logger: e.log}

	q := &failingQueue{}
	worker.NewWebhookNotifier(e.st, q, cfg).Notify(t.Context(), j, job.EventSucceeded)
	logs, err := e.st.Deliveries(t.Context(), j.ID)
	if err != nil || len(logs) != 1 || q.calls != 1 {
		t.Fatalf("deliveries = %+v, %v after %d enqueues; want one", logs, err, q.calls)
	}
	if logs[0].Status != webhook.StatusFailed {
		t.Errorf("delivery whose enqueue failed is %s, want failed (not in flight, so it can be redelivered)", logs[0].Status)
	}

	orphan := &webhook.Delivery{JobID: j.ID, ID: webhook.MessageID(j.ID, job.EventFailed), Event: job.EventFailed,
		URL: spec.Webhook.URL, Status: webhook.StatusPending, MaxRetry: 1, Payload: json.RawMessage(`{}`)}
	if _, err := e.st.CreateDelivery(t.Context(), orphan); err != nil {
		t.Fatal(err)
	}
	n := worker.NewWebhookNotifier(e.st, e.queue, cfg)
	for range 3 {
		n.Notify(t.Context(), j, job.EventFailed)
	}
	pending, err := asynq.NewInspectorFromRedisClient(e.rdb).ListPendingTasks(queue.QueueWebhooks)
	if err != nil || len(pending) != 1 || pending[0].ID != queue.WebhookDeliverTaskID(j.ID, orphan.N, 0) {
		t.Errorf("webhook tasks = %d, %v; want the orphan's one task", len(pending), err)
	}
	if logs, _ := e.st.Deliveries(t.Context(), j.ID); len(logs) != 2 || logs[1].Status != webhook.StatusPending {
		t.Errorf("deliveries = %+v, want the orphan still pending, now with its task", logs)
	}
}
