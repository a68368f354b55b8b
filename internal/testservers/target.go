package testservers

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// Target is a loopback fasthttp server that answers every request with one
// body, after a delay when one is given, and counts the requests: the
// plain target of the worker's and the service's tests.
type Target struct {
	// URL is http://127.0.0.1:PORT/.
	URL  string
	hits atomic.Int64
	last atomic.Int64 // unix ns of the latest request
}

// StartTarget serves body (as text/plain) after delay on a free 127.0.0.1
// port until the test ends.
func StartTarget(t testing.TB, body string, delay time.Duration) *Target {
	t.Helper()
	return StartCounting(t, func(c *fasthttp.RequestCtx) {
		if delay > 0 {
			time.Sleep(delay)
		}
		c.SetContentType("text/plain")
		c.SetBodyString(body)
	})
}

// StartFailing is StartTarget (no delay) that fails every nth request
// it receives (the 2nd, 4th... for n = 2: half of them): it closes the
// connection without an answer, which a client counts as a failed
// request, not a non-2xx one.
func StartFailing(t testing.TB, body string, n int64) *Target {
	t.Helper()
	var seen atomic.Int64
	return StartCounting(t, func(c *fasthttp.RequestCtx) {
		if n > 0 && seen.Add(1)%n == 0 {
			c.HijackSetNoResponse(true)
			c.Hijack(func(net.Conn) {}) // fasthttp closes it on return
			return
		}
		c.SetContentType("text/plain")
		c.SetBodyString(body)
	})
}

// StartCounting serves h on a free 127.0.0.1 port until the test ends,
// counting the requests as StartTarget does.
func StartCounting(t testing.TB, h fasthttp.RequestHandler) *Target {
	t.Helper()
	tg := &Target{}
	tg.URL = StartFasthttp(t, func(c *fasthttp.RequestCtx) {
		tg.hits.Add(1)
		tg.last.Store(time.Now().UnixNano())
		h(c)
	}) + "/"
	return tg
}

// Hits is the number of requests the target has seen.
func (tg *Target) Hits() int64 { return tg.hits.Load() }

// ResetHits returns Hits and starts the count again from 0, for subtests
// that share one target.
func (tg *Target) ResetHits() int64 { return tg.hits.Swap(0) }

// LastHit is when the latest request arrived; the zero time before any.
func (tg *Target) LastHit() time.Time {
	ns := tg.last.Load()
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// ErrNotLoopback is LoopbackOnly's refusal.
var ErrNotLoopback = errors.New("testservers: only loopback targets are allowed")

// LoopbackOnly is a URL policy for tests: it admits localhost and loopback
// addresses (127.0.0.0/8, ::1) and refuses every other host with
// ErrNotLoopback, as the service's dev mode does.
func LoopbackOnly(u *url.URL) error {
	h := u.Hostname()
	if h == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(h); err == nil && ip.Unmap().IsLoopback() {
		return nil
	}
	return ErrNotLoopback
}
