package hostile

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/proctest"
	"github.com/benchq/benchq/internal/redistest"
)

// TestHungWebhooksDoNotDelayOtherTenants: one key's jobs send their
// webhooks to a receiver that holds every connection without answering;
// another key's webhook, sent after all of them, still arrives within
// otherBound of its job's end, on the same worker process. Before each
// key had a share of the delivery slots, the hung deliveries took every
// slot for an attempt's 10 s timeout each, and it waited 10-20 s here
// (78 s with more of them).
func TestHungWebhooksDoNotDelayOtherTenants(t *testing.T) {
	if testing.Short() {
		t.Skip("fault suite: real processes; skipped with -short")
	}
	const (
		hostileJobs = 10 // a default key's active-job limit; 2 webhooks each
		otherBound  = 5 * time.Second
	)
	rs := redistest.Start(t)
	bin := proctest.Build(t)
	env := append(os.Environ(), "BENCHQ_REDIS_URL="+rs.URL(), "BENCHQ_ALLOW_TARGETS=127.0.0.0/8",
		"BENCHQ_WEBHOOK_BACKOFF=1m") // a timed-out attempt is not retried during the test
	api := proctest.Start(t, bin, env, "serve", "--addr", "127.0.0.1:0")
	addr := api.WaitAddr(t)
	proctest.Start(t, bin, env, "worker")
	hostile := proctest.KeyedBase(t, bin, rs.URL(), addr, "hostile")
	other := proctest.KeyedBase(t, bin, rs.URL(), addr, "other")

	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(target.Close)
	var held atomic.Int64
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		held.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	arrived := make(chan time.Time, 4)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		arrived <- time.Now()
	}))
	t.Cleanup(ok.Close)

	submit := func(base, hook string, events ...string) string {
		spec, _ := json.Marshal(map[string]any{
			"targets": []map[string]string{{"url": target.URL}},
			"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{10}},
			"webhook": map[string]any{"url": hook, "events": events},
		})
		resp, body := proctest.Call(t, http.MethodPost, base+"/v1/jobs", spec)
		var j struct{ ID string }
		if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &j) != nil || j.ID == "" {
			t.Fatalf("POST /v1/jobs = %d %s", resp.StatusCode, body)
		}
		return j.ID
	}
	finished := func(base, id string) time.Time {
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, body := proctest.Call(t, http.MethodGet, base+"/v1/jobs/"+id, nil)
			var j struct {
				Status     string
				FinishedAt *time.Time `json:"finished_at"`
			}
			if err := json.Unmarshal(body, &j); err != nil {
				t.Fatalf("GET job %s: %v: %s", id, err, body)
			}
			if j.FinishedAt != nil {
				if j.Status != "succeeded" {
					t.Fatalf("job %s ended %s: %s", id, j.Status, body)
				}
				return *j.FinishedAt
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s not over after 30 s: %s", id, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	var ids []string
	for range hostileJobs {
		ids = append(ids, submit(hostile, hung.URL, "job.started", "job.succeeded"))
	}
	for _, id := range ids {
		finished(hostile, id)
	}
	id := submit(other, ok.URL, "job.succeeded")
	end := finished(other, id)
	select {
	case at := <-arrived:
		took := at.Sub(end)
		t.Logf("the other key's webhook arrived %s after its job ended, with %d webhooks of %d hostile jobs held by a hung receiver (%d attempts held so far)",
			took.Round(time.Millisecond), 2*hostileJobs, hostileJobs, held.Load())
		if took > otherBound {
			t.Errorf("the other key's webhook took %s after its job ended, want under %s", took.Round(time.Millisecond), otherBound)
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("the other key's webhook did not arrive within 40 s; %d hostile attempts held", held.Load())
	}
}
