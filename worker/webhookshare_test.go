package worker_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/internal/webhook"
	"github.com/benchq/benchq/worker"
)

// hungReceiver is a webhook endpoint that never answers: each request is
// held until the sender gives up on it (its attempt timeout) or the test
// ends. It counts the requests it holds at once.
type hungReceiver struct {
	url              string
	total            atomic.Int64
	inFlight, widest atomic.Int64
}

func startHungReceiver(t *testing.T) *hungReceiver {
	t.Helper()
	hr := &hungReceiver{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		hr.total.Add(1)
		n := hr.inFlight.Add(1)
		defer hr.inFlight.Add(-1)
		for w := hr.widest.Load(); n > w && !hr.widest.CompareAndSwap(w, n); w = hr.widest.Load() {
		}
		select {
		case <-r.Context().Done():
		case <-release:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	hr.url = srv.URL + "/hooks/never"
	// Registered last, so run first: the delivery server's shutdown then
	// need not wait out the held attempts.
	t.Cleanup(func() { close(release) })
	return hr
}

// TestWebhookOwnerShare: one tenant's webhooks to a receiver that never
// answers hold at most half the delivery server's slots (its share, or
// more while half are free), each for the real 10 s attempt timeout; the
// rest wait in the queue without taking a slot, and another tenant's
// webhook, enqueued behind all of them, arrives within deliveryBound.
// Without the share the hung ones take every slot for 10 s per ten of
// them, and it would wait 30 s.
func TestWebhookOwnerShare(t *testing.T) {
	if testing.Short() {
		t.Skip("holds webhook attempts to a hung receiver for seconds")
	}
	const (
		hungDeliveries = 30
		deliveryBound  = 5 * time.Second // generous: about a second is expected
		share          = 2               // the default: a quarter of 10 slots
		most           = 5               // half the slots: over the share while they are free
	)
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", 0) // the jobs' target, never loaded here
	secret := webhook.NewSecret()
	ok := startReceiver(t, secret, answer{code: 200})
	schedule := webhook.Schedule{time.Minute} // a failed attempt is not retried during the test
	hooks := worker.NewWebhooks(e.rdb, e.st, worker.WebhookConfig{Schedule: schedule, Logger: e.log})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := hooks.Run(ctx); err != nil {
			t.Errorf("Webhooks.Run = %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	hung := startHungReceiver(t)

	notifier := worker.NewWebhookNotifier(e.st, e.queue, worker.NotifierConfig{Schedule: schedule, Logger: e.log})
	notify := func(owner, url string) *job.Job {
		spec := closedSpec([]int{1}, []int{10}, 1, tg)
		spec.Webhook = &job.Webhook{URL: url, Events: []string{job.EventStarted}}
		j, _ := e.createAs(t, owner, spec)
		if err := e.st.SetWebhookSecret(t.Context(), j.ID, secret); err != nil {
			t.Fatal(err)
		}
		if err := notifier.Notify(t.Context(), j, job.EventStarted); err != nil {
			t.Fatal(err)
		}
		return j
	}
	for range hungDeliveries {
		notify("key-hung", hung.url)
	}
	deadline := time.Now().Add(10 * time.Second)
	for hung.inFlight.Load() < share {
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts held by the hung receiver after 10 s, want at least %d", hung.inFlight.Load(), share)
		}
		time.Sleep(10 * time.Millisecond)
	}
	heldAt := time.Now()

	sent := time.Now()
	notify("key-ok", ok.url)
	select {
	case <-ok.arrived:
	case <-time.After(25 * time.Second):
		t.Fatalf("the other tenant's webhook did not arrive within 25 s, with %d of the hung tenant's attempts held at once", hung.widest.Load())
	}
	took := time.Since(sent)
	t.Logf("other tenant's webhook arrived %s after it was enqueued, behind %d deliveries to a hung receiver (%d attempts made, at most %d at once)",
		took.Round(time.Millisecond), hungDeliveries, hung.total.Load(), hung.widest.Load())
	if took > deliveryBound {
		t.Errorf("other tenant's webhook took %s, want under %s", took.Round(time.Millisecond), deliveryBound)
	}
	if w := hung.widest.Load(); w > most {
		t.Errorf("the hung tenant had %d attempts in flight at once, want at most %d, half the slots", w, most)
	}
	if n := hung.total.Load(); n > most && time.Since(heldAt) < 9*time.Second {
		t.Errorf("the hung receiver got %d requests within the first attempt timeout, want at most %d: the rest wait their turn", n, most)
	}
}
