package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/internal/webhook"
)

// TestChangePointAtTheSlowerJob runs the whole service on a real
// redis-server and its real worker: sixteen jobs of one template against
// a loopback target answering after 30 ms, the last eight after 36 ms
// (20 % slower). The change point of p50_ms is named at the first slower
// job, its trend.change_point webhook event reaches a real receiver once
// however many later job ends find it again, the trends API lists it with
// an id that survives a second request, acknowledging it shows in the
// list, and the chart marks it.
func TestChangePointAtTheSlowerJob(t *testing.T) {
	if testing.Short() {
		t.Skip("sixteen real jobs")
	}
	m := startOnRedis(t)
	var delay atomic.Int64
	delay.Store(int64(30 * time.Millisecond))
	target := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(time.Duration(delay.Load()))
		ctx.SetBodyString("ok")
	})

	var mu sync.Mutex
	deliveries := map[string]webhook.Payload{} // by webhook-id: a retry is the same delivery
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p webhook.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		deliveries[r.Header.Get("webhook-id")] = p
		mu.Unlock()
	}))
	t.Cleanup(rc.Close)

	tpl := map[string]any{
		"name": "shift",
		"spec": map[string]any{
			"labels":  map[string]string{"branch": "main", "commit": "{{commit}}"},
			"targets": []map[string]any{{"name": "shop", "url": target + "/"}},
			"sweep":   map[string]any{"concurrency": []int{2}, "requests": []int{20}},
			"webhook": map[string]any{"url": rc.URL + "/hook", "events": []string{job.EventChangePoint}},
		},
		"values": map[string]string{"commit": "0000000"},
	}
	body, _ := json.Marshal(tpl)
	if resp, b := call(t, http.MethodPost, m.URL()+"/v1/templates", body); resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/templates = %d %s", resp.StatusCode, b)
	}
	const half = 8
	var ids []string
	start := time.Now()
	for i := range 2 * half {
		if i == half {
			delay.Store(int64(36 * time.Millisecond))
		}
		run, _ := json.Marshal(map[string]any{"values": map[string]string{"commit": strings.Repeat(string(rune('a'+i)), 7)}})
		resp, b := call(t, http.MethodPost, m.URL()+"/v1/templates/shift/run", run)
		var j apiJob
		if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &j) != nil || j.ID == "" {
			t.Fatalf("run %d: POST /v1/templates/shift/run = %d %s", i, resp.StatusCode, b)
		}
		if done := waitJob(t, m.URL(), j.ID, time.Minute); done.Status != "succeeded" {
			t.Fatalf("run %d: job %s %s (%s)", i, done.ID, done.Status, done.Error)
		}
		ids = append(ids, j.ID)
	}
	t.Logf("%d jobs in %s", len(ids), time.Since(start).Round(time.Millisecond))
	firstSlow := ids[half]

	// The trends API lists the change point of p50_ms at the first slower job.
	trend := func() (changes []job.ChangePoint) {
		t.Helper()
		resp, b := call(t, http.MethodGet, m.URL()+"/v1/trends?template=shift&metric=p50_ms&branch=main&change_points=true", nil)
		var tr struct {
			Points []struct {
				Value   float64 `json:"value"`
				Testbed string  `json:"testbed"`
			} `json:"points"`
			ChangePoints []job.ChangePoint `json:"change_points"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &tr) != nil || len(tr.Points) != 2*half {
			t.Fatalf("GET /v1/trends?change_points=true = %d %s", resp.StatusCode, b)
		}
		if tr.Points[0].Testbed == "" {
			t.Errorf("point %+v has no testbed: the worker stores one with each run", tr.Points[0])
		}
		var values []float64
		for _, p := range tr.Points {
			values = append(values, p.Value)
		}
		t.Logf("p50_ms per job: %.2f", values)
		return tr.ChangePoints
	}
	changes := trend()
	if len(changes) != 1 || changes[0].JobID != firstSlow || changes[0].Commit != "iiiiiii" {
		t.Fatalf("change points = %+v, want one at the first slower job %s (commit iiiiiii)", changes, firstSlow)
	}
	cp := changes[0]
	t.Logf("change point: %+v", cp)
	if cp.Magnitude < 0.1 || cp.Magnitude > 0.3 || cp.PValue > job.DefaultChangeMaxPValue || cp.Acknowledged || cp.Metric != "p50_ms" {
		t.Errorf("change point = %+v, want p50_ms about 20 %% up, p <= 0.001, not acknowledged", cp)
	}

	// The webhook event carried it, once, though later job ends found it again.
	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		n := len(deliveries)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a second delivery of the same point would be here by now
	mu.Lock()
	seen := map[string]int{}
	var carrier string
	for _, p := range deliveries {
		if p.Type != job.EventChangePoint {
			t.Errorf("a delivery of %s, want only %s", p.Type, job.EventChangePoint)
		}
		for _, c := range p.Data.ChangePoints {
			seen[c.ID]++
			if c.ID == cp.ID {
				carrier = p.Data.JobID
			}
		}
	}
	mu.Unlock()
	if seen[cp.ID] != 1 {
		t.Fatalf("the change point reached the receiver %d times in %d deliveries, want once", seen[cp.ID], len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("change point %s delivered %d times, want once", id, n)
		}
	}
	t.Logf("announced with job %s (job %d of %d)", carrier, slices.Index(ids, carrier)+1, len(ids))
	if i := slices.Index(ids, carrier); i < half {
		t.Errorf("announced with job %d, before the shift", i+1)
	}

	// Acknowledged, it stays listed, acknowledged, under the same id.
	resp, b := call(t, http.MethodPost, m.URL()+"/v1/trends/change-points/"+cp.ID+"/acknowledge", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST acknowledge = %d %s", resp.StatusCode, b)
	}
	if again := trend(); len(again) != 1 || again[0].ID != cp.ID || !again[0].Acknowledged || again[0].AcknowledgedBy == "" {
		t.Errorf("change points after acknowledging = %+v, want %s acknowledged", again, cp.ID)
	}
	resp, b = call(t, http.MethodGet, m.URL()+"/v1/trends?template=shift&metric=p50_ms&branch=main&change_points=true&format=svg", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "change +") || !strings.Contains(string(b), "(ack)") {
		t.Errorf("GET /v1/trends?format=svg&change_points=true = %d, want the acknowledged change point marked", resp.StatusCode)
	}
	// The dashboard's Trends page lists it beside the chart.
	resp, b = call(t, http.MethodGet, m.URL()+"/ui/trends?template=shift&metric=p50_ms&branch=main", nil)
	page := string(b)
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `id="trend-change-points"`) || !strings.Contains(page, firstSlow) || !strings.Contains(page, "yes, ") {
		t.Errorf("GET /ui/trends = %d, want the change points table naming %s, acknowledged", resp.StatusCode, firstSlow)
	}
}
