package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/benchq/benchq/internal/browsertest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestRunChartsInChromium opens finished jobs' pages in a real headless
// Chromium, signed in with a key: a job of two runs shows both runs'
// timeline and distribution charts unfolded, and every one of them loads
// (through the session and under the page's Content-Security-Policy); a
// sweep of five runs has them folded, and the browser fetches a run's
// charts only once its fold is opened. No console error.
func TestRunChartsInChromium(t *testing.T) {
	rs, st := keyedRedis(t)
	key, _ := addKey(t, rs, st, "alice")
	m := keyedMain(t, rs)
	target := testservers.StartTarget(t, "ok", 0)
	api := "http://" + key + "@" + m.Addr()
	few := submit(t, api, map[string]any{
		"name": "two timed runs", "targets": []map[string]string{{"name": "t", "url": target.URL}},
		"sweep": map[string]any{"concurrency": []int{2}, "duration": []string{"2s"}, "repeats": 2},
	})
	many := submit(t, api, map[string]any{
		"name": "five runs", "targets": []map[string]string{{"name": "t", "url": target.URL}},
		"sweep": map[string]any{"concurrency": []int{1, 2, 3, 4, 5}, "requests": []int{300}, "repeats": 1},
	})
	b := browsertest.Start(t, 1280, 900)
	ui := m.URL() + "/ui/"
	b.Do(t, 20*time.Second, chromedp.Navigate(ui), chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), key), chromedp.Click(chromedp.CSS("button[type=submit]")),
		chromedp.WaitVisible(chromedp.CSS("table.jobs")))
	for _, id := range []string{few.ID, many.ID} {
		if j := waitJob(t, api, id, 60*time.Second); j.Status != "succeeded" {
			t.Fatalf("job %s = %s %s, want succeeded", id, j.Status, j.Error)
		}
	}

	// Two runs: four charts, unfolded, each loaded once scrolled to (they
	// are lazy images).
	b.Do(t, 20*time.Second, chromedp.Navigate(ui+"jobs/"+few.ID), chromedp.WaitVisible(chromedp.CSS("details.runcharts img")))
	imgs := "document.querySelectorAll('details.runcharts img')"
	if n := browsertest.Eval[float64](t, b, imgs+".length"); n != 4 {
		t.Fatalf("job of two runs shows %v run charts, want 4", n)
	}
	if n := browsertest.Eval[float64](t, b, "document.querySelectorAll('details.runcharts[open]').length"); n != 2 {
		t.Errorf("job of two runs has %v runs' charts unfolded, want 2", n)
	}
	for i := range 4 {
		img := fmt.Sprintf("%s[%d]", imgs, i)
		scrollTo(t, b, img)
		waitLoaded(t, b, img)
	}
	if src := browsertest.Eval[string](t, b, imgs+"[3].src"); !strings.Contains(src, "chart=distribution") || !strings.Contains(src, "run=0%3a1") {
		t.Errorf("last chart image = %s, want run 0:1's distribution", src)
	}

	// Five runs: folded, nothing fetched until a fold opens.
	b.Requests()
	b.Do(t, 20*time.Second, chromedp.Navigate(ui+"jobs/"+many.ID), chromedp.WaitVisible(chromedp.CSS("details.runcharts summary")))
	if n := browsertest.Eval[float64](t, b, "document.querySelectorAll('details.runcharts[open]').length"); n != 0 {
		t.Errorf("a five-run job has %v runs' charts unfolded, want none", n)
	}
	time.Sleep(500 * time.Millisecond) // let anything eager load
	for _, u := range b.Requests() {
		if strings.Contains(u, "chart=") {
			t.Errorf("the page fetched %s before its fold was opened", u)
		}
	}
	b.Do(t, 10*time.Second, chromedp.Click(chromedp.CSS("details.runcharts summary")))
	first := "document.querySelector('details.runcharts img')"
	scrollTo(t, b, first)
	waitLoaded(t, b, first)
	fetched := 0
	for _, u := range b.Requests() {
		if strings.Contains(u, "chart=") {
			fetched++
		}
	}
	if fetched == 0 || fetched > 2 {
		t.Errorf("opening one run's fold fetched %d charts, want its own (1 or 2)", fetched)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// waitLoaded waits until the image img (a JavaScript expression) has
// loaded a picture.
func waitLoaded(t *testing.T, b *browsertest.Browser, img string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if browsertest.Eval[bool](t, b, "(i => i.complete && i.naturalWidth > 0)("+img+")") {
			return
		}
	}
	t.Errorf("%s (%s) did not load", img, browsertest.Eval[string](t, b, img+".src"))
}

// scrollTo scrolls the element el (a JavaScript expression) into view.
func scrollTo(t *testing.T, b *browsertest.Browser, el string) {
	t.Helper()
	browsertest.Eval[bool](t, b, "(() => { "+el+".scrollIntoView(); return true })()")
}
