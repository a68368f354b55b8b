package testservers

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestTargetCountsAndAnswers(t *testing.T) {
	tg := StartTarget(t, "hello", 20*time.Millisecond)
	if tg.Hits() != 0 || !tg.LastHit().IsZero() {
		t.Fatalf("fresh target: %d hits, last %v; want 0 and the zero time", tg.Hits(), tg.LastHit())
	}
	start := time.Now()
	for range 2 {
		resp, err := http.Get(tg.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "hello" || resp.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("GET %s = %q, %q; want \"hello\", text/plain", tg.URL, b, resp.Header.Get("Content-Type"))
		}
	}
	if took := time.Since(start); took < 40*time.Millisecond {
		t.Errorf("2 requests took %v, want at least the 2 × 20ms delay", took)
	}
	if tg.Hits() != 2 || tg.LastHit().Before(start) {
		t.Errorf("after 2 requests: %d hits, last %v; want 2, after %v", tg.Hits(), tg.LastHit(), start)
	}
	if n := tg.ResetHits(); n != 2 || tg.Hits() != 0 {
		t.Errorf("ResetHits() = %d, then Hits() = %d; want 2, 0", n, tg.Hits())
	}
}

func TestLoopbackOnly(t *testing.T) {
	admitted := []string{"http://127.0.0.1:8080/", "http://127.0.0.2/", "http://localhost/", "http://[::1]:9000/", "http://[::ffff:127.0.0.1]/"}
	refused := []string{"http://10.0.0.1/", "http://169.254.169.254/", "http://example.com/", "http://[::ffff:192.168.1.1]/"}
	check := func(raw string) error {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return LoopbackOnly(u)
	}
	for _, raw := range admitted {
		if err := check(raw); err != nil {
			t.Errorf("LoopbackOnly(%s) = %v, want nil", raw, err)
		}
	}
	for _, raw := range refused {
		if err := check(raw); !errors.Is(err, ErrNotLoopback) {
			t.Errorf("LoopbackOnly(%s) = %v, want ErrNotLoopback", raw, err)
		}
	}
}
