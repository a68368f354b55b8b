package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/internal/webhook"
)

// TestWebhookEndToEnd runs the whole service in-process on a real Redis:
// a job's webhook goes to a loopback receiver that checks every request
// with the independent Standard Webhooks library, using the secret the
// POST returned. The receiver fails the first three attempts; the fourth
// is delivered, GET /deliveries logs all four under one webhook-id, and a
// redelivery arrives with that id again. The payload links start with the
// configured public URL.
func TestWebhookEndToEnd(t *testing.T) {
	rs := redistest.Start(t)
	m := startMain(t, func(c *config.Config) {
		c.RedisURL = rs.URL()
		c.WebhookBackoff = []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
		c.PublicURL = "https://benchq.example"
	})
	tg := testservers.StartTarget(t, "hello", 0)

	var (
		mu       sync.Mutex
		verifier *standardwebhooks.Webhook
		ids      []string
		bodies   [][]byte
		bad      []error
	)
	ready := make(chan struct{})
	var openOnce sync.Once
	open := func() { openOnce.Do(func() { close(ready) }) }
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-ready // the secret is known once the POST answered
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if verifier == nil { // the test ended before the POST answered
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if err := verifier.Verify(body, r.Header); err != nil {
			bad = append(bad, err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ids = append(ids, r.Header.Get("webhook-id"))
		bodies = append(bodies, body)
		if len(ids) <= 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.Close)
	// Cleanups run last-in first-out: a test that fails before the POST
	// answered opens the gate before rc.Close waits for the handlers.
	t.Cleanup(open)

	spec := map[string]any{
		"targets": []map[string]any{{"name": "a", "url": tg.URL}},
		"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{20}},
		"webhook": map[string]any{"url": rc.URL + "/hooks", "events": []string{"job.succeeded"}},
	}
	body, _ := json.Marshal(spec)
	resp, b := call(t, http.MethodPost, m.URL()+"/v1/jobs", body)
	var created struct {
		ID            string `json:"id"`
		WebhookSecret string `json:"webhook_secret"`
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &created) != nil || created.WebhookSecret == "" {
		t.Fatalf("POST /v1/jobs = %d %s, want 202 with a webhook_secret", resp.StatusCode, b)
	}
	wh, err := standardwebhooks.NewWebhook(created.WebhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	verifier = wh
	mu.Unlock()
	open()
	if got := waitJob(t, m.URL(), created.ID, 60*time.Second); got.Status != "succeeded" {
		t.Fatalf("job ended %s (%s)", got.Status, got.Error)
	}

	type delivery struct {
		N         int    `json:"n"`
		WebhookID string `json:"webhook_id"`
		Status    string `json:"status"`
		Attempts  []struct {
			N          int    `json:"n"`
			StatusCode int    `json:"status_code"`
			Outcome    string `json:"outcome"`
		} `json:"attempts"`
	}
	deliveries := func() []delivery {
		resp, b := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+created.ID+"/deliveries", nil)
		var out struct {
			Deliveries []delivery `json:"deliveries"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil {
			t.Fatalf("GET deliveries = %d %s", resp.StatusCode, b)
		}
		return out.Deliveries
	}
	waitDelivered := func(attempts int) delivery {
		deadline := time.Now().Add(20 * time.Second)
		for {
			ds := deliveries()
			if len(ds) == 1 && ds[0].Status == "delivered" && len(ds[0].Attempts) == attempts {
				return ds[0]
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries = %+v, want one delivered after %d attempts", ds, attempts)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	d := waitDelivered(4)
	for i, a := range d.Attempts {
		want := 500
		if i == 3 {
			want = 200
		}
		if a.N != i+1 || a.StatusCode != want {
			t.Errorf("attempt %d = %+v, want n %d status %d", i, a, i+1, want)
		}
	}

	resp, b = call(t, http.MethodPost, m.URL()+"/v1/jobs/"+created.ID+"/deliveries/1/redeliver", nil)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("redeliver = %d %s", resp.StatusCode, b)
	}
	waitDelivered(5)

	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Errorf("the Standard Webhooks library rejected %d requests: %v", len(bad), bad)
	}
	if len(ids) != 5 {
		t.Fatalf("receiver verified %d requests, want 5", len(ids))
	}
	for i, id := range ids {
		if id != d.WebhookID {
			t.Errorf("request %d webhook-id = %q, want %q on every attempt and the redelivery", i, id, d.WebhookID)
		}
	}
	var payload webhook.Payload
	if err := json.Unmarshal(bodies[0], &payload); err != nil {
		t.Fatal(err)
	}
	if want := "https://benchq.example/v1/jobs/" + created.ID; payload.Data.Links.Self != want {
		t.Errorf("payload links.self = %q, want %q (the public URL)", payload.Data.Links.Self, want)
	}
}

// TestWebhookLinkBase: payload links start with --public-url wherever it
// is set, with the all-in-one process's own address when it listens on
// one, and are relative only when neither is known.
func TestWebhookLinkBase(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	any4, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = any4.Close() })
	tests := []struct {
		name      string
		publicURL string
		listener  net.Listener
		want      string
	}{
		{"worker with a public URL", "https://benchq.example", nil, "https://benchq.example"},
		{"all-in-one with a public URL", "https://benchq.example", ln, "https://benchq.example"},
		{"all-in-one on loopback", "", ln, "http://" + ln.Addr().String()},
		{"all-in-one on every interface", "", any4, ""},
		{"worker without one", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.PublicURL = tt.publicURL
			m := NewMain(cfg, nil)
			m.listener = tt.listener
			if got := m.linkBase(); got != tt.want {
				t.Errorf("linkBase() = %q, want %q", got, tt.want)
			}
		})
	}
}
