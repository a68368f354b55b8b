package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

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
	raw, _ := rdb.HGetAll(ctx, store.JobKey(j.ID)).Result()
	for f, v := range raw {
		if f != "owner" && json.Valid([]byte(v)) && strings.Contains(v, "whsec_abc") {
			t.Errorf("job hash field %s holds the secret", f)
		}
	}

	// Concurrent creators of distinct events get distinct numbers.
	events := []string{"job.started", "job.succeeded", "job.failed", "job.canceled", "job.other"}
	var wg sync.WaitGroup
	for _, ev := range events {
		wg.Go(func() {
			d := &webhook.Delivery{JobID: j.ID, ID: webhook.MessageID(j.ID, ev), Event: ev,
				URL: "http://127.0.0.1:9/", Status: webhook.StatusPending, Payload: json.RawMessage(`{"a":1}`)}
			if created, err := s.CreateDelivery(ctx, d); err != nil || !created || d.N < 1 {
				t.Errorf("CreateDelivery(%s) = %v, %v, n %d; want created", ev, created, err, d.N)
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
	stored, _ := rdb.LRange(ctx, store.AttemptsKey(j.ID, 2), 0, 0).Result()
	if len(stored) != 1 || strings.Contains(stored[0], `"n":`) || !strings.Contains(stored[0], `"status_code":500`) {
		t.Errorf("stored attempt = %q, want the whole record, numbered by its position", stored)
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
	if _, err := s.CreateDelivery(ctx, &webhook.Delivery{JobID: jobID(9)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateDelivery(unknown job) = %v, want ErrNotFound", err)
	}
	for _, k := range []string{store.WebhookSecretKey(j.ID), store.DeliveriesKey(j.ID), store.AttemptsKey(j.ID, 2)} {
		if ttl, err := rdb.TTL(ctx, k).Result(); err != nil || ttl <= testRetention-time.Minute || ttl > testRetention {
			t.Errorf("TTL %s = %v, %v; want about %v", k, ttl, err, testRetention)
		}
	}
}

// TestCreateDeliveryOncePerEvent: racing creators of one event get one
// delivery between them; every loser gets that delivery back, as stored
// (first payload, status since updated), and the list never holds a blank
// or half-written record. On redis-server and on miniredis (the
// all-in-one mode's Redis), whose Lua the script must suit too.
func TestCreateDeliveryOncePerEvent(t *testing.T) {
	real, realRDB := newStore(t)
	miniRDB := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	mini := store.New(miniRDB, store.Options{Retention: testRetention})
	for name, b := range map[string]struct {
		s   *store.Store
		rdb *redis.Client
	}{"redis-server": {real, realRDB}, "miniredis": {mini, miniRDB}} {
		t.Run(name, func(t *testing.T) { testCreateDeliveryOncePerEvent(t, b.s, b.rdb) })
	}
}

func testCreateDeliveryOncePerEvent(t *testing.T, s *store.Store, rdb *redis.Client) {
	ctx := t.Context()
	j := newJob(jobID(1), "", 0, nil)
	mustCreate(t, s, j)
	const racers = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		numbers = map[int]int{}
	)
	for i := range racers {
		wg.Go(func() {
			d := &webhook.Delivery{JobID: j.ID, ID: webhook.MessageID(j.ID, "job.succeeded"), Event: "job.succeeded",
				Status: webhook.StatusPending, Payload: json.RawMessage(fmt.Sprintf(`{"racer":%d}`, i))}
			ok, err := s.CreateDelivery(ctx, d)
			if err != nil {
				t.Errorf("CreateDelivery = %v", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			numbers[d.N]++
			if ok {
				created++
			}
		})
	}
	wg.Wait()
	if created != 1 || len(numbers) != 1 || numbers[1] != racers {
		t.Fatalf("%d racers: %d created, numbers %v; want 1 created and every racer holding delivery 1", racers, created, numbers)
	}
	first, err := s.Delivery(ctx, j.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateDelivery(ctx, j.ID, 1, func(d *webhook.Delivery) error { d.Status = webhook.StatusDelivered; return nil }); err != nil {
		t.Fatal(err)
	}
	again := &webhook.Delivery{JobID: j.ID, ID: webhook.MessageID(j.ID, "job.succeeded"), Event: "job.succeeded",
		Status: webhook.StatusPending, Payload: json.RawMessage(`{"late":true}`)}
	if ok, err := s.CreateDelivery(ctx, again); err != nil || ok {
		t.Fatalf("CreateDelivery(same event, later) = %v, %v; want the existing one", ok, err)
	}
	if again.N != 1 || again.JobID != j.ID || again.Status != webhook.StatusDelivered || string(again.Payload) != string(first.Payload) {
		t.Errorf("CreateDelivery(same event) gave %+v, want delivery 1 as stored (delivered, payload %s)", again, first.Payload)
	}
	other := &webhook.Delivery{JobID: j.ID, ID: webhook.MessageID(j.ID, "job.started"), Event: "job.started", Status: webhook.StatusPending}
	if ok, err := s.CreateDelivery(ctx, other); err != nil || !ok || other.N != 2 {
		t.Errorf("CreateDelivery(another event) = %v, %v, n %d; want created as 2", ok, err, other.N)
	}
	raw, err := rdb.LRange(ctx, store.DeliveriesKey(j.ID), 0, -1).Result()
	if err != nil || len(raw) != 2 {
		t.Fatalf("deliveries list = %q, %v; want 2 records", raw, err)
	}
	for i, r := range raw {
		if !strings.Contains(r, `"event":"job.`) || strings.Contains(r, `"n":`) {
			t.Errorf("record %d = %s, want a whole delivery numbered by its position", i+1, r)
		}
	}
}
