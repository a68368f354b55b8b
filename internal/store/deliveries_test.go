package store_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/webhook"
)

func TestDeliveriesRoundTrip(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	j := newJob(jobID(1), "", 0, nil)
	mustCreate(t, s, j)
	if err := s.SetWebhookSecret(ctx, j.ID, "whsec_abc"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.WebhookSecret(ctx, j.ID); err != nil || got != "whsec_abc" {
		t.Errorf("WebhookSecret = %q, %v", got, err)
	}
	if _, err := s.WebhookSecret(ctx, jobID(2)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("WebhookSecret(unknown job) = %v, want ErrNotFound", err)
	}
	// The secret is not part of the job as read back.
	raw, _ := rdb.HGetAll(ctx, "benchq:job:"+j.ID).Result()
	for f, v := range raw {
		if f != "owner" && json.Valid([]byte(v)) && strings.Contains(v, "whsec_abc") {
			t.Errorf("job hash field %s holds the secret", f)
		}
	}

	// Concurrent creators get distinct numbers.
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			d := &webhook.Delivery{JobID: j.ID, ID: webhook.NewMessageID(), Event: "job.succeeded",
				URL: "http://127.0.0.1:9/", Status: webhook.StatusPending, Payload: json.RawMessage(`{"a":1}`)}
			if err := s.CreateDelivery(ctx, d); err != nil {
				t.Errorf("CreateDelivery = %v", err)
			}
		})
	}
	wg.Wait()
	for i := range 3 {
		a := &webhook.Attempt{At: time.Now().UTC(), StatusCode: 500 + i, Outcome: webhook.OutcomeRetry}
		if err := s.AppendAttempt(ctx, j.ID, 2, a); err != nil || a.N != i+1 {
			t.Fatalf("AppendAttempt #%d = %v, n %d", i+1, err, a.N)
		}
	}
	d, err := s.UpdateDelivery(ctx, j.ID, 2, func(d *webhook.Delivery) error { d.Status = webhook.StatusDelivered; return nil })
	if err != nil || d.Status != webhook.StatusDelivered {
		t.Fatalf("UpdateDelivery = %+v, %v", d, err)
	}
	logs, err := s.Deliveries(ctx, j.ID)
	if err != nil || len(logs) != 5 {
		t.Fatalf("Deliveries = %d, %v; want 5", len(logs), err)
	}
	ids := map[string]bool{}
	for i, l := range logs {
		ids[l.ID] = true
		if l.N != i+1 || string(l.Payload) != `{"a":1}` {
			t.Errorf("delivery %d = n %d payload %s", i+1, l.N, l.Payload)
		}
	}
	if len(ids) != 5 {
		t.Errorf("5 deliveries carry %d distinct ids", len(ids))
	}
	if l := logs[1]; l.Status != webhook.StatusDelivered || len(l.Attempts) != 3 || l.Attempts[2].StatusCode != 502 || l.Attempts[2].N != 3 {
		t.Errorf("delivery 2 = %+v", l)
	}
	if _, err := s.Delivery(ctx, j.ID, 6); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Delivery(6) = %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateDelivery(ctx, j.ID, 0, func(*webhook.Delivery) error { return nil }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UpdateDelivery(0) = %v, want ErrNotFound", err)
	}
	if err := s.CreateDelivery(ctx, &webhook.Delivery{JobID: jobID(9)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateDelivery(unknown job) = %v, want ErrNotFound", err)
	}
	for _, k := range []string{"benchq:job:" + j.ID + ":webhook_secret", "benchq:job:" + j.ID + ":deliveries", "benchq:job:" + j.ID + ":delivery:2:attempts"} {
		if ttl, err := rdb.TTL(ctx, k).Result(); err != nil || ttl <= testRetention-time.Minute || ttl > testRetention {
			t.Errorf("TTL %s = %v, %v; want about %v", k, ttl, err, testRetention)
		}
	}
}
