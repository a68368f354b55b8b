package browsertest

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// candidates are where Debian and others put Chromium.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"}

// Path finds a Chromium binary: $BENCHQ_CHROMIUM, else the first
// candidate on $PATH.
func Path() string {
	if p := os.Getenv("BENCHQ_CHROMIUM"); p != "" {
		return p
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// Browser is one headless Chromium tab with what it saw: console errors,
// uncaught exceptions and browser log errors (a CSP violation is one), and
// every URL it requested.
type Browser struct {
	Ctx context.Context

	mu       sync.Mutex
	errors   []string
	requests []string
}

// Start launches Chromium for the test, with a window of width×height,
// and closes it at the end of the test.
func Start(t testing.TB, width, height int) *Browser {
	t.Helper()
	path := Path()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("browsertest: no Chromium found under CI (install the chromium package or set BENCHQ_CHROMIUM)")
		}
		t.Skip("browsertest: no Chromium found (apt-get install chromium, or set BENCHQ_CHROMIUM); skipping the browser test")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // root in CI containers
		chromedp.DisableGPU,
		chromedp.WindowSize(width, height),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("font-render-hinting", "none"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &Browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Request != nil {
			b.mu.Lock()
			b.requests = append(b.requests, e.Request.URL)
			b.mu.Unlock()
		}
	}))
	b.Ctx = ctx
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first action starts the browser, which lives as long as the
	// context it was given: the tab's own, not one with a deadline. A
	// browser that hangs on start is stopped by go test's timeout.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errors = append(b.errors, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// Do runs actions with a bound on how long they may take.
func (b *Browser) Do(t testing.TB, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, limit)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
}

// Text is the text of the first element sel matches, once visible.
func (b *Browser) Text(t testing.TB, sel string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("browsertest: text of %s: %v", sel, err)
	}
	return s
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t testing.TB, b *Browser, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("browsertest: evaluate %s: %v", expr, err)
	}
	return v
}

// Errors returns the console errors and exceptions seen so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Requests returns every URL requested so far, and forgets them.
func (b *Browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.requests
	b.requests = nil
	return r
}

// Screenshot captures the whole page as PNG into path.
func (b *Browser) Screenshot(t testing.TB, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("browsertest: screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("browsertest: write %s: %v", path, err)
	}
}

// ScreenshotOf captures the first element sel matches as PNG into path.
func (b *Browser) ScreenshotOf(t testing.TB, sel, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("browsertest: screenshot of %s: %v", sel, err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("browsertest: write %s: %v", path, err)
	}
}
