package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/benchq/benchq/internal/browsertest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestCapacityChartInChromium runs a short capacity search (a target of 2
// requests in service held 50 ms, 40 req/s; probes of a second from 10
// req/s, the bracket kept coarse) and opens its finished job's page in a
// real headless Chromium: the capacity section shows the search's chart
// as a lazy image that loads through the session and the page's
// Content-Security-Policy, and the chart the API draws names the SLO's
// bound. No console error.
func TestCapacityChartInChromium(t *testing.T) {
	rs, st := keyedRedis(t)
	key, _ := addKey(t, rs, st, "alice")
	m := keyedMain(t, rs)
	target := testservers.StartCapacity(t, 2, 50*time.Millisecond)
	api := "http://" + key + "@" + m.Addr()
	j := submit(t, api, map[string]any{
		"name": "a short search", "targets": []map[string]string{{"name": "held", "url": target.URL}},
		"request": map[string]any{"keepalive": true},
		"sweep":   map[string]any{"concurrency": []int{1}, "requests": []int{10}},
		"search": map[string]any{"slo": []string{"p50_ms < 100"}, "min_rate": 10, "max_rate": 160,
			"probe_duration": "1s", "max_duration": "10s", "precision": 1, "confirm": 1},
	})
	b := browsertest.Start(t, 1280, 900)
	ui := m.URL() + "/ui/"
	b.Do(t, 20*time.Second, chromedp.Navigate(ui), chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), key), chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	if got := waitJob(t, api, j.ID, 90*time.Second); got.Status != "succeeded" {
		t.Fatalf("job %s = %s %s, want succeeded", j.ID, got.Status, got.Error)
	}

	resp, svg := call(t, http.MethodGet, api+"/v1/jobs/"+j.ID+"/report?format=svg&chart=capacity", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(svg), "SLO p50_ms &lt; 100") {
		t.Fatalf("GET report?format=svg&chart=capacity = %d %.300s, want a chart with the SLO's line", resp.StatusCode, svg)
	}

	b.Do(t, 20*time.Second, chromedp.Navigate(ui+"jobs/"+j.ID), chromedp.WaitVisible(chromedp.CSS("#capacitychart img")))
	img := "document.querySelector('#capacitychart img')"
	if lazy := browsertest.Eval[string](t, b, img+".loading"); lazy != "lazy" {
		t.Errorf("capacity chart image loading = %q, want lazy", lazy)
	}
	if src := browsertest.Eval[string](t, b, img+".src"); !strings.Contains(src, "chart=capacity") {
		t.Errorf("capacity chart image = %s, want the report's chart=capacity", src)
	}
	scrollTo(t, b, img)
	waitLoaded(t, b, img)
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
