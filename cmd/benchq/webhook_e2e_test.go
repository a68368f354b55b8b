package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/redistest"
)

// TestWebhookEndToEnd runs the whole service in-process on a real Redis:
// a job's webhook goes to a loopback receiver that checks every request
// with the independent Standard Webhooks library, using the secret the
// POST returned. The receiver fails the first three attempts; the fourth
// is delivered, GET /deliveries logs all four under one webhook-id, and a
// redelivery arrives with that id again.
func TestWebhookEndToEnd(t *testing.T) {
	rs := redistest.Start(t)
	m := startMain(t, func(c *config.Config) {
		c.RedisURL = rs.URL()
		c.WebhookBackoff = []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}
	})
	tg := startTarget(t, "hello")

	var (
		mu       sync.Mutex
		verifier *standardwebhooks.Webhook
		ids      []string
		bad      []error
	)
	ready := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-ready // the secret is known once the POST answered
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if err := verifier.Verify(body, r.Header); err != nil {
			bad = append(bad, err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ids = append(ids, r.Header.Get("webhook-id"))
		if len(ids) <= 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.Close)

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
	close(ready)
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
}
