package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/browsertest"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/internal/webhook"
)

// TestTrendFailsSlowerRun runs the whole service on a real redis-server:
// ten jobs of one template against a loopback target answering after
// 20 ms, then an eleventh after 30 ms (50 % slower, so that a loaded machine's
// scheduling delay in the baseline's p99 cannot hide the change). The template's trend
// ("p99 more than 10 % above the median of the last 10 runs of main")
// fails the eleventh's verdict naming the trend, the job's webhook brings
// that failure to a real receiver, and /v1/trends serves the eleven
// points, oldest first.
func TestTrendFailsSlowerRun(t *testing.T) {
	m := startOnRedis(t)
	var delay atomic.Int64
	delay.Store(int64(20 * time.Millisecond))
	target := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(time.Duration(delay.Load()))
		ctx.SetBodyString("ok")
	})

	var mu sync.Mutex
	got := map[string]webhook.Payload{} // by job id
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var p webhook.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got[p.Data.JobID] = p
		mu.Unlock()
	}))
	t.Cleanup(rc.Close)

	tpl := map[string]any{
		"name": "checkout",
		"spec": map[string]any{
			"labels":  map[string]string{"branch": "main", "commit": "{{commit}}"},
			"targets": []map[string]any{{"name": "shop", "url": target + "/"}},
			"sweep":   map[string]any{"concurrency": []int{2}, "requests": []int{40}},
			"trend":   map[string]any{"metric": "p99", "max_increase_pct": 10, "window": 10, "branch": "main"},
			"webhook": map[string]any{"url": rc.URL + "/hook", "events": []string{"job.succeeded"}},
		},
		"values": map[string]string{"commit": "0000000"},
	}
	body, _ := json.Marshal(tpl)
	if resp, b := call(t, http.MethodPost, m.URL()+"/v1/templates", body); resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /v1/templates = %d %s", resp.StatusCode, b)
	}
	var last apiJob
	for i := range 11 {
		if i == 10 {
			delay.Store(int64(30 * time.Millisecond))
		}
		run, _ := json.Marshal(map[string]any{"values": map[string]string{"commit": strings.Repeat(string(rune('a'+i)), 7)}})
		resp, b := call(t, http.MethodPost, m.URL()+"/v1/templates/checkout/run", run)
		var j apiJob
		if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &j) != nil || j.ID == "" {
			t.Fatalf("run %d: POST /v1/templates/checkout/run = %d %s", i, resp.StatusCode, b)
		}
		last = waitJob(t, m.URL(), j.ID, time.Minute)
		if last.Status != "succeeded" {
			t.Fatalf("run %d: job %s %s (%s)", i, last.ID, last.Status, last.Error)
		}
	}
	if last.Verdict != "fail" {
		t.Fatalf("the 50 %% slower 11th job's verdict = %q, want fail", last.Verdict)
	}

	// The webhook of the 11th job carries the trend's failure.
	deadline := time.Now().Add(30 * time.Second)
	var p webhook.Payload
	for {
		mu.Lock()
		var ok bool
		p, ok = got[last.ID]
		mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no webhook for job %s within 30 s", last.ID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p.Data.Verdict != "fail" || len(p.Data.Failures) == 0 {
		t.Fatalf("webhook = %+v, want verdict fail with the trend's failure", p.Data)
	}
	f := p.Data.Failures[0]
	if !strings.Contains(f.Threshold, "trend: p99_ms more than 10 % above the median of the last 10 runs of main") ||
		!strings.Contains(f.Reason, "median of the last 10 finished runs of main") || len(f.TrendJobs) != 10 {
		t.Errorf("webhook failure = %+v, want the trend named, with 10 jobs behind its median", f)
	}
	if f.Baseline != nil {
		t.Logf("11th job p99 %.2f ms against a median of %.2f ms over %d jobs: %s", f.Value, *f.Baseline, len(f.TrendJobs), f.Reason)
	}
	if f.Baseline == nil || f.Value < 1.1**f.Baseline {
		t.Errorf("failure value %v against median %v: want more than 10 %% above", f.Value, f.Baseline)
	}

	// The trend API serves the series the verdict was judged on.
	resp, b := call(t, http.MethodGet, m.URL()+"/v1/trends?template=checkout&metric=p99&target=shop&branch=main", nil)
	var tr struct {
		Metric string `json:"metric"`
		Points []struct {
			JobID  string  `json:"job_id"`
			Value  float64 `json:"value"`
			Commit string  `json:"commit"`
		} `json:"points"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &tr) != nil {
		t.Fatalf("GET /v1/trends = %d %s", resp.StatusCode, b)
	}
	if tr.Metric != "p99_ms" || len(tr.Points) != 11 || tr.Points[10].JobID != last.ID || tr.Points[0].Commit != "aaaaaaa" || tr.Points[10].Value != f.Value {
		t.Errorf("trend = %s, want 11 p99_ms points oldest first, the last the failed job's", b)
	}
	resp, b = call(t, http.MethodGet, m.URL()+"/v1/trends?template=checkout&metric=p99&format=svg", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(string(b), "kkkkkkk") {
		t.Errorf("GET /v1/trends?format=svg = %d %s, want the chart naming the last commit", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, b = call(t, http.MethodGet, m.URL()+"/v1/trends?template=checkout&metric=p42", nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"field":"metric"`) {
		t.Errorf("GET /v1/trends with an unknown metric = %d %s, want 400 naming the field", resp.StatusCode, b)
	}

	// The dashboard draws the same series in a real Chromium: the chart
	// loaded, one row per point, the last the failed job's.
	t.Run("dashboard", func(t *testing.T) {
		br := browsertest.Start(t, 1280, 900)
		shots := os.Getenv("BENCHQ_SCREENSHOTS")
		br.Do(t, 20*time.Second, chromedp.Navigate(m.URL()+"/ui/trends?template=checkout&metric=p99_ms&target=shop&branch=main"),
			chromedp.WaitVisible(chromedp.CSS("#trend-points")))
		if n := browsertest.Eval[float64](t, br, "document.querySelectorAll('#trend-points tbody tr').length"); n != 11 {
			t.Errorf("the trend table has %v rows, want 11", n)
		}
		if !browsertest.Eval[bool](t, br, "(i => i.complete && i.naturalWidth > 0)(document.getElementById('trend-chart'))") {
			t.Error("the trend chart did not load")
		}
		lastRow := browsertest.Eval[string](t, br, "document.querySelector('#trend-points tbody tr:last-child').textContent")
		if !strings.Contains(lastRow, last.ID) || !strings.Contains(lastRow, "fail") || !strings.Contains(lastRow, "kkkkkkk") {
			t.Errorf("the last row reads %q, want the failed 11th job with its commit", lastRow)
		}
		if errs := br.Errors(); len(errs) > 0 {
			t.Errorf("console errors: %q", errs)
		}
		if shots != "" {
			br.Screenshot(t, filepath.Join(shots, "ui-trends.png"))
		}
	})
}
