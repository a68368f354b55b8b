package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/valyala/fasthttp"

	"github.com/benchq/benchq/internal/browsertest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestDashboardInChromium drives the dashboard in a real headless
// Chromium: sign in with a key, submit a 2-target sweep through the form,
// watch the job page's progress change without a reload, see the final
// charts, table and verdict, open the compare view, render at phone
// width, and open the self-contained HTML report. No console error, and no
// request to anything but the service. With BENCHQ_SCREENSHOTS=DIR it
// also writes the screenshots docs/ shows (scripts/screenshots.sh).
func TestDashboardInChromium(t *testing.T) {
	rs, st := keyedRedis(t)
	key, _ := addKey(t, rs, st, "alice")
	m := keyedMain(t, rs)
	// The form's job reaches a "slow" target faster than the baseline's,
	// so the compare view has a difference to show beside a "~".
	fast, slow, slower := testservers.StartTarget(t, "fast", 0), testservers.StartTarget(t, "slow", 150*time.Microsecond), testservers.StartTarget(t, "slow", 400*time.Microsecond)
	shots := os.Getenv("BENCHQ_SCREENSHOTS")
	shot := func(b *browsertest.Browser, name string) {
		if shots != "" {
			b.Screenshot(t, filepath.Join(shots, name))
		}
	}
	b := browsertest.Start(t, 1280, 900)
	ui := m.URL() + "/ui/"

	// A comparison needs a baseline job; it runs while the browser signs in.
	baseline := submit(t, "http://"+key+"@"+m.Addr(), map[string]any{
		"name": "baseline sweep", "labels": map[string]string{"branch": "main"}, "baseline": "fast",
		"targets":    []map[string]string{{"name": "fast", "url": fast.URL}, {"name": "slow", "url": slower.URL}},
		"sweep":      map[string]any{"concurrency": []int{1, 4}, "requests": []int{600}, "repeats": 4},
		"thresholds": []string{"p99_ms < 50"},
	})

	b.Do(t, 20*time.Second, chromedp.Navigate(ui), chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), key), chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	if got := b.Text(t, "h1"); got != "Jobs" {
		t.Fatalf("after sign-in the page is %q, want the job list", got)
	}
	waitJob(t, "http://"+key+"@"+m.Addr(), baseline.ID, 60*time.Second)

	// Submit through the form: the same sweep as the baseline's, which
	// runs for a few seconds, so its page has progress to show.
	in := func(name string) chromedp.CSS { return chromedp.CSS(`input[name="` + name + `"]`) }
	b.Do(t, 20*time.Second, chromedp.Navigate(ui+"new"), chromedp.WaitVisible(in("targets[0].url")),
		chromedp.SetValue(in("targets[0].name"), "fast"), chromedp.SetValue(in("targets[0].url"), fast.URL),
		chromedp.SetValue(in("targets[1].name"), "slow"), chromedp.SetValue(in("targets[1].url"), slow.URL),
		chromedp.SetValue(in("sweep.concurrency"), "1 4"), chromedp.SetValue(in("sweep.requests"), "600"),
		chromedp.SetValue(in("sweep.repeats"), "4"),
		chromedp.SetValue(in("name"), "browser sweep"), chromedp.SetValue(in("baseline"), "fast"),
		chromedp.SetValue(in("labels"), "branch:feature"),
		chromedp.Click(chromedp.CSS("button.primary")), chromedp.WaitVisible(chromedp.CSS("#live")))
	jobURL := browsertest.Eval[string](t, b, "location.pathname")
	id := strings.TrimPrefix(jobURL, "/ui/jobs/")

	// Live: the progress text changes while the page stays loaded (the
	// marker set now would be gone after a reload).
	browsertest.Eval[bool](t, b, "window.__stay = true")
	first := b.Text(t, "#requests") + "|" + b.Text(t, "#runs")
	changed, running := false, false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if !browsertest.Eval[bool](t, b, "window.__stay === true && !!document.getElementById('live')") {
			break // reloaded into the final view
		}
		if now := b.Text(t, "#requests") + "|" + b.Text(t, "#runs"); now != first {
			changed = true
			if !running && b.Text(t, "#rps") != "0" {
				running = true
				shot(b, "ui-job-running.png")
			}
			if running {
				break
			}
		}
	}
	if !changed {
		t.Fatalf("the live job page never changed its progress (%q)", first)
	}

	// Final view: the page reloads itself when the job ends.
	b.Do(t, 40*time.Second, chromedp.WaitVisible(chromedp.CSS(".verdict-banner")), chromedp.WaitVisible(chromedp.CSS(".chart img")))
	text := b.Text(t, "main")
	for _, want := range []string{"Verdict", "fast", "slow", "slow vs fast", "mean successful req/s", "latency percentiles", "p99.9", "errors", "Saturation", "Reports"} {
		if !strings.Contains(text, want) {
			t.Errorf("final job page lacks %q", want)
		}
	}
	if !browsertest.Eval[bool](t, b, "(i => i.complete && i.naturalWidth > 0)(document.querySelector('.chart img'))") {
		t.Errorf("the chart image did not load")
	}
	shot(b, "ui-job.png")

	b.Do(t, 20*time.Second, chromedp.Navigate(ui+"compare?a="+id+"&b="+baseline.ID), chromedp.WaitVisible(chromedp.CSS("table.data")))
	if text := b.Text(t, "main"); !strings.Contains(text, "compared with job "+baseline.ID) || !strings.Contains(text, "(p=") {
		t.Errorf("compare view = %q, want the comparison table with a significant difference", text)
	}
	// One chart, one scale: each target drawn for both jobs.
	if n := browsertest.Eval[float64](t, b, "document.querySelectorAll('.chart img').length"); n != 1 {
		t.Errorf("compare view has %v charts, want one overlay", n)
	}
	if !browsertest.Eval[bool](t, b, "(i => i.complete && i.naturalWidth > 0)(document.querySelector('.chart img'))") {
		t.Errorf("the compare chart did not load")
	}
	shot(b, "ui-compare.png")
	// Read with the page's session, as the <img> did.
	svgText := "(() => { const x = new XMLHttpRequest(); x.open('GET', document.querySelector('.chart img').src, false); x.send(); return x.responseText })()"
	if text := browsertest.Eval[string](t, b, svgText); !strings.Contains(text, "fast (this job)") || !strings.Contains(text, "fast (baseline)") {
		t.Errorf("compare chart text = %.300q, want each target for both jobs", text)
	}

	b.Do(t, 20*time.Second, chromedp.Navigate(ui), chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	shot(b, "ui-jobs.png")

	// A laptop's and a phone's width: no page wider than the screen (a
	// wide table or chart scrolls in its own box).
	for _, screen := range []struct {
		w, h   int64
		mobile bool
	}{{1280, 900, false}, {360, 740, true}} {
		for _, page := range []string{"", "jobs/" + id, "compare?a=" + id + "&b=" + baseline.ID, "jobs/" + id + "/report?format=html"} {
			opts := []chromedp.EmulateViewportOption{}
			if screen.mobile {
				opts = append(opts, chromedp.EmulateMobile)
			}
			b.Do(t, 20*time.Second, chromedp.EmulateViewport(screen.w, screen.h, opts...), chromedp.Navigate(ui+page),
				chromedp.WaitVisible(chromedp.CSS("h1")))
			if w := browsertest.Eval[float64](t, b, "document.documentElement.scrollWidth"); w > float64(screen.w) {
				t.Errorf("/ui/%s at %d px is %v px wide", page, screen.w, w)
			}
		}
	}
	b.Do(t, 20*time.Second, chromedp.Navigate(ui), chromedp.WaitVisible(chromedp.CSS("main")))
	shot(b, "ui-phone.png")
	b.Do(t, 10*time.Second, chromedp.EmulateViewport(1280, 900))

	// The HTML report loads nothing besides itself, under its CSP.
	b.Requests()
	report := ui + "jobs/" + id + "/report?format=html"
	b.Do(t, 20*time.Second, chromedp.Navigate(report), chromedp.WaitVisible(chromedp.CSS("svg")))
	if got := b.Requests(); !slices.Equal(got, []string{report}) {
		t.Errorf("the HTML report requested %q, want only itself", got)
	}
	if text := b.Text(t, "body"); !strings.Contains(text, "slow vs fast") || !strings.Contains(text, "Verdict") {
		t.Errorf("HTML report text lacks its tables: %.300q", text)
	}

	// A noisy point is marked on the job page and in its chart: a target
	// that answers its first 200 requests at once and the next 200 after
	// 2 ms each gives two repeats far apart.
	var served atomic.Int64
	uneven := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		if served.Add(1) > 200 {
			time.Sleep(2 * time.Millisecond)
		}
		ctx.SetBodyString("uneven")
	})
	noisy := submit(t, "http://"+key+"@"+m.Addr(), map[string]any{
		"name": "noisy", "targets": []map[string]string{{"name": "uneven", "url": uneven + "/"}},
		"sweep": map[string]any{"concurrency": []int{1}, "requests": []int{200}, "repeats": 2},
	})
	waitJob(t, "http://"+key+"@"+m.Addr(), noisy.ID, 60*time.Second)
	b.Do(t, 20*time.Second, chromedp.Navigate(ui+"jobs/"+noisy.ID), chromedp.WaitVisible(chromedp.CSS("table.data")))
	marked := browsertest.Eval[bool](t, b, "[...document.querySelectorAll('table.data td')].some(td => td.textContent.trim().endsWith('‡'))")
	if text := b.Text(t, "main"); !marked || !strings.Contains(text, "‡ noisy: req/s varied by more than 10 %") {
		t.Errorf("the noisy job's page lacks the noisy mark on its cell (%v) or its legend: %.600q", marked, text)
	}

	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	for _, u := range b.Requests() {
		if p, err := url.Parse(u); err != nil || p.Host != m.Addr() && p.Scheme != "about" && p.Scheme != "data" {
			t.Errorf("the browser requested %s, outside the service", u)
		}
	}
	if resp, _ := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+id, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the API without a key = %d, want 401: the test ran with keys", resp.StatusCode)
	}
}
