package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/browsertest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestLiveChartInChromium runs a 10-second job (two 5 s runs, 250 ms
// intervals) against a target that slows down and answers some errors in
// the middle of each run, and watches its live page in a real headless
// Chromium: the current run's chart draws more intervals between two
// reads without a reload, the job's ETA is shown and goes down, and
// nothing breaks the page's CSP. With BENCHQ_SCREENSHOTS=DIR it saves the
// live page mid-run (ui-job-live.png, scripts/screenshots.sh).
func TestLiveChartInChromium(t *testing.T) {
	rs, st := keyedRedis(t)
	key, _ := addKey(t, rs, st, "alice")
	m := keyedMain(t, rs)
	var first atomic.Int64 // the first request's time: each run's schedule starts there, 5 s a run
	var n atomic.Int64
	target := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		now := time.Now().UnixNano()
		first.CompareAndSwap(0, now)
		at := time.Duration(now-first.Load()) % (5 * time.Second)
		delay := time.Millisecond
		if at >= 2*time.Second && at < 3500*time.Millisecond {
			delay = 8 * time.Millisecond // a slower spell
		}
		time.Sleep(delay)
		if at >= 3*time.Second && at < 4*time.Second && n.Add(1)%10 == 0 {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable) // and some errors
		}
		ctx.SetBodyString("live chart")
	})
	base := "http://" + key + "@" + m.Addr()
	b := browsertest.Start(t, 1280, 1000)
	ui := m.URL() + "/ui/"
	b.Do(t, 20*time.Second, chromedp.Navigate(ui), chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), key), chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("form.filters")))

	j := submit(t, base, map[string]any{
		"name":     "live chart",
		"targets":  []map[string]string{{"name": "app", "url": target + "/"}},
		"sweep":    map[string]any{"concurrency": []int{4}, "duration": []string{"5s"}, "repeats": 2},
		"timeline": map[string]any{"interval": "250ms"},
	})
	b.Do(t, 20*time.Second, chromedp.Navigate(ui+"jobs/"+j.ID), chromedp.WaitVisible(chromedp.CSS("#live")))
	browsertest.Eval[bool](t, b, "window.__stay = true")
	stayed := func() bool {
		return browsertest.Eval[bool](t, b, "window.__stay === true && !!document.getElementById('live')")
	}

	// The chart appears with the run's first intervals.
	type reading struct {
		run       string
		intervals float64
		eta       float64
	}
	read := func() reading {
		return reading{
			run:       browsertest.Eval[string](t, b, "document.getElementById('chartrun').textContent"),
			intervals: browsertest.Eval[float64](t, b, "Number(document.getElementById('chart').dataset.intervals || 0)"),
			eta:       browsertest.Eval[float64](t, b, "Number(document.getElementById('eta').dataset.seconds || -1)"),
		}
	}
	var r1 reading
	var start1 time.Time
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if !stayed() {
			t.Fatal("the job page reloaded before its live chart drew anything")
		}
		if r1 = read(); r1.intervals >= 2 && r1.eta >= 0 {
			start1 = time.Now()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live chart within 30 s: %+v, page %q", r1, b.Text(t, "#live"))
		}
	}
	// More intervals of the same run without a reload (a new run's chart
	// starts afresh, so a read across runs starts the count again).
	from, r2 := r1, r1
	for deadline := time.Now().Add(8 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		if !stayed() {
			t.Fatal("the job page reloaded while the job ran")
		}
		r2 = read()
		if r2.run != from.run {
			from = r2
		} else if r2.intervals > from.intervals {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chart of %q stayed at %v intervals for 8 s", from.run, from.intervals)
		}
	}
	// The ETA, two seconds on.
	time.Sleep(max(0, 2*time.Second-time.Since(start1)))
	r3 := read()
	t.Logf("first read %+v; more intervals %+v; 2 s after the first %+v", r1, r2, r3)
	if r3.eta >= r1.eta || r3.eta <= 0 {
		t.Errorf("job ETA went from %v s to %v s in 2 s; want it shown and going down", r1.eta, r3.eta)
	}
	if !strings.HasPrefix(r1.run, "Run: app · c=4 · t=5s · repeat ") {
		t.Errorf("chart caption = %q, want the run's point and repeat", r1.run)
	}
	if eta := b.Text(t, "#eta"); eta == "" || eta == "–" {
		t.Errorf("the ETA reads %q", eta)
	}
	lines := browsertest.Eval[float64](t, b, "document.querySelectorAll('#chart polyline.s-ok, #chart polyline.s-p99').length")
	if lines < 2 {
		t.Errorf("the chart has %v req/s and p99 lines, want both", lines)
	}
	if dir := os.Getenv("BENCHQ_SCREENSHOTS"); dir != "" {
		// Later in the run the slow spell and the errors are on the chart.
		for until := time.Now().Add(10 * time.Second); time.Now().Before(until) && read().intervals < 16 && stayed(); {
			time.Sleep(200 * time.Millisecond)
		}
		b.Screenshot(t, filepath.Join(dir, "ui-job-live.png"))
	}

	waitJob(t, base, j.ID, 60*time.Second)
	b.Do(t, 40*time.Second, chromedp.WaitVisible(chromedp.CSS(".verdict-banner")))
	if dir := os.Getenv("BENCHQ_SCREENSHOTS"); dir != "" {
		finishedRunCharts(t, b, filepath.Join(dir, "ui-job-timeline.png"))
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors or CSP violations: %q", errs)
	}
}

// finishedRunCharts saves the finished job page's first run charts (its
// timeline and latency distribution), loaded at once rather than lazily.
func finishedRunCharts(t *testing.T, b *browsertest.Browser, path string) {
	t.Helper()
	const charts = "details.runcharts"
	if !browsertest.Eval[bool](t, b, "!!document.querySelector('"+charts+"')") {
		t.Logf("the finished job page has no run charts; no %s", path)
		return
	}
	browsertest.Eval[bool](t, b, "(d => { d.open = true; d.querySelectorAll('img').forEach(i => { i.loading = 'eager'; }); d.scrollIntoView(); return true })(document.querySelector('"+charts+"'))")
	loaded := "Array.from(document.querySelector('" + charts + "').querySelectorAll('img')).every(i => i.complete && i.naturalWidth > 0)"
	for deadline := time.Now().Add(20 * time.Second); !browsertest.Eval[bool](t, b, loaded); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run charts did not load")
		}
	}
	b.ScreenshotOf(t, charts, path)
}
