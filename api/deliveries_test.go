package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/webhook"
)

// newDeliveryEnv is keyEnv with the webhook store wired, and the URL
// policy given.
func newDeliveryEnv(t *testing.T, check func(*Config)) *keyEnv {
	t.Helper()
	st := store.New(redistest.Start(t).Client(t), store.Options{})
	env := &keyEnv{store: st, queue: &jobtest.Queue{}}
	cfg := Config{OpenUntilFirstKey: true, CheckURL: netguard.LoopbackOnly().CheckURL}
	if check != nil {
		check(&cfg)
	}
	env.srv = New(cfg, Deps{Store: st, Queue: env.queue, Keys: st, Quotas: st, Deliveries: st})
	hs := httptest.NewServer(env.srv.Handler())
	t.Cleanup(hs.Close)
	env.url = hs.URL
	return env
}

const webhookJob = `{"targets":[{"url":"http://127.0.0.1:9/"}],"webhook":{"url":"http://127.0.0.1:9000/hooks"}}`

func createJob(t *testing.T, e *keyEnv, key, body string) CreateJobResponse {
	t.Helper()
	resp, b := e.do(t, http.MethodPost, "/v1/jobs", key, body)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /v1/jobs = %d %s", resp.StatusCode, b)
	}
	var r CreateJobResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWebhookSecretShownOnce: a generated secret is in the POST answer
// only; GET never shows it, and it is what the store signs with.
func TestWebhookSecretShownOnce(t *testing.T) {
	e := newDeliveryEnv(t, nil)
	_, key := e.addKey(t, "a", false, apikey.Quota{})
	r := createJob(t, e, key, webhookJob)
	if _, err := webhook.NewSigner(r.WebhookSecret); err != nil {
		t.Fatalf("webhook_secret = %q: %v", r.WebhookSecret, err)
	}
	if got, err := e.store.WebhookSecret(t.Context(), r.ID); err != nil || got != r.WebhookSecret {
		t.Errorf("stored secret = %q, %v; want the one returned", got, err)
	}
	for _, path := range []string{"/v1/jobs/" + r.ID, "/v1/jobs", "/v1/jobs/" + r.ID + "/results"} {
		resp, b := e.do(t, http.MethodGet, path, key, "")
		if resp.StatusCode != http.StatusOK || strings.Contains(string(b), "whsec_") || strings.Contains(string(b), "webhook_secret") {
			t.Errorf("GET %s = %d, shows the secret: %s", path, resp.StatusCode, b)
		}
	}
	if r := createJob(t, e, key, `{"targets":[{"url":"http://127.0.0.1:9/"}]}`); r.WebhookSecret != "" {
		t.Errorf("job without a webhook got secret %q", r.WebhookSecret)
	}
}

// TestKeyWebhookSecretIsUsed: a key with its own secret signs its jobs'
// webhooks with it, and the POST answer shows none.
func TestKeyWebhookSecretIsUsed(t *testing.T) {
	e := newDeliveryEnv(t, nil)
	secret := webhook.NewSecret()
	k, key, err := apikey.New("ci", false, apikey.Quota{}, secret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.AddKey(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	r := createJob(t, e, key, webhookJob)
	if r.WebhookSecret != "" {
		t.Errorf("webhook_secret = %q, want none: the key has its own", r.WebhookSecret)
	}
	if got, _ := e.store.WebhookSecret(t.Context(), r.ID); got != secret {
		t.Errorf("stored secret = %q, want the key's", got)
	}
}

// TestWebhookURLRefusedAtSubmission: private and metadata addresses are
// refused with a 422 naming webhook.url, in the loopback-only development
// policy and in the public one alike.
func TestWebhookURLRefusedAtSubmission(t *testing.T) {
	public, err := netguard.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]func(*Config){
		"loopback-only": nil,
		"public":        func(c *Config) { c.CheckURL = public.CheckURL },
	}
	for name, tune := range policies {
		e := newDeliveryEnv(t, tune)
		for _, hook := range []string{"http://10.0.0.1/hooks", "http://169.254.169.254/latest/meta-data/", "http://[::ffff:10.0.0.1]:80/", "file:///etc/passwd"} {
			t.Run(name+" "+hook, func(t *testing.T) {
				body := `{"targets":[{"url":"http://127.0.0.1:9/"}],"webhook":{"url":"` + hook + `"}}`
				resp, b := e.do(t, http.MethodPost, "/v1/jobs", "", body)
				p := problem(t, resp, b)
				if resp.StatusCode != http.StatusUnprocessableEntity || !hasField(p, "webhook.url") {
					t.Errorf("POST with webhook %s = %d %+v, want 422 naming webhook.url", hook, resp.StatusCode, p)
				}
			})
		}
	}
}

func hasField(p Problem, field string) bool {
	if p.Field == field {
		return true
	}
	for _, e := range p.Errors {
		if e.Field == field {
			return true
		}
	}
	return false
}

// TestDeliveriesEndpoints lists and redelivers through the API, scoped to
// the job's owner.
func TestDeliveriesEndpoints(t *testing.T) {
	e := newDeliveryEnv(t, nil)
	idA, keyA := e.addKey(t, "a", false, apikey.Quota{})
	_, keyB := e.addKey(t, "b", false, apikey.Quota{})
	r := createJob(t, e, keyA, webhookJob)
	ctx := t.Context()
	d := &webhook.Delivery{JobID: r.ID, ID: "msg_fixed", Event: "job.succeeded", URL: "http://127.0.0.1:9000/hooks",
		Status: webhook.StatusFailed, MaxRetry: 9, Payload: json.RawMessage(`{"type":"job.succeeded"}`)}
	if _, err := e.store.CreateDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := e.store.AppendAttempt(ctx, r.ID, 1, &webhook.Attempt{StatusCode: 500, Response: "oops", DurationMs: 3.5, Outcome: webhook.OutcomeRetry}); err != nil {
		t.Fatal(err)
	}
	base := "/v1/jobs/" + r.ID + "/deliveries"

	resp, b := e.do(t, http.MethodGet, base, keyA, "")
	var list DeliveriesResponse
	if err := json.Unmarshal(b, &list); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("GET deliveries = %d %s", resp.StatusCode, b)
	}
	if len(list.Deliveries) != 1 || list.Deliveries[0].WebhookID != "msg_fixed" || list.Deliveries[0].Status != webhook.StatusFailed ||
		len(list.Deliveries[0].Attempts) != 1 || list.Deliveries[0].Attempts[0].StatusCode != 500 || list.Deliveries[0].Attempts[0].Response != "oops" ||
		string(list.Deliveries[0].Payload) != `{"type":"job.succeeded"}` {
		t.Errorf("GET deliveries = %s", b)
	}

	// Another key sees nothing of it.
	for _, req := range [][2]string{{http.MethodGet, base}, {http.MethodPost, base + "/1/redeliver"}} {
		if resp, b := e.do(t, req[0], req[1], keyB, ""); resp.StatusCode != http.StatusNotFound || strings.Contains(string(b), "msg_fixed") {
			t.Errorf("key B %s %s = %d %s, want 404", req[0], req[1], resp.StatusCode, b)
		}
	}

	resp, b = e.do(t, http.MethodPost, base+"/1/redeliver", keyA, "")
	var rd DeliveryResponse
	if err := json.Unmarshal(b, &rd); resp.StatusCode != http.StatusAccepted || err != nil || rd.Status != webhook.StatusPending || rd.Redeliveries != 1 || rd.WebhookID != "msg_fixed" {
		t.Fatalf("redeliver = %d %s", resp.StatusCode, b)
	}
	tasks := e.queue.Tasks()
	if n := len(tasks); n != 2 {
		t.Fatalf("%d tasks enqueued, want 2: the job's and the redelivery", n)
	}
	task := tasks[len(tasks)-1]
	if p, err := queue.ParseWebhookDeliver(task); err != nil || p.JobID != r.ID || p.Delivery != 1 || p.Owner != idA {
		t.Errorf("enqueued %s %s = %+v, %v; want delivery 1 of job %s, owner %s (its share of the delivery server)", task.Type(), task.Payload(), p, err, r.ID, idA)
	}
	// Pending again: a second redelivery would race the first.
	if resp, b := e.do(t, http.MethodPost, base+"/1/redeliver", keyA, ""); resp.StatusCode != http.StatusConflict {
		t.Errorf("redeliver while pending = %d %s, want 409", resp.StatusCode, b)
	}
	for _, n := range []string{"2", "0", "x"} {
		if resp, b := e.do(t, http.MethodPost, base+"/"+n+"/redeliver", keyA, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("redeliver %s = %d %s, want 404", n, resp.StatusCode, b)
		}
	}
}
