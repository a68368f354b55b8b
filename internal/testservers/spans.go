package testservers

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// SpanHeader names, in a request to a SpanTarget, whose load it is.
const SpanHeader = "X-Benchq-Load"

// Span is what a SpanTarget saw of one load: its first and last request
// (the server's clock, when the request arrived) and how many it served.
type Span struct {
	First, Last time.Time
	Requests    int64
}

// Overlaps reports whether s and o were served at once at some point.
func (s Span) Overlaps(o Span) bool {
	return s.Requests > 0 && o.Requests > 0 && s.First.Before(o.Last) && o.First.Before(s.Last)
}

// SpanTarget is a loopback HTTP server that records, per value of
// SpanHeader, when it served that load: the target's own view of whether
// two loads ran at once.
type SpanTarget struct {
	URL string

	mu    sync.Mutex
	spans map[string]Span
}

// StartSpanTarget serves 200 "ok" after delay on 127.0.0.1 until the
// test ends.
func StartSpanTarget(t testing.TB, delay time.Duration) *SpanTarget {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	st := &SpanTarget{URL: "http://" + ln.Addr().String() + "/", spans: map[string]Span{}}
	srv := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) {
		st.record(string(c.Request.Header.Peek(SpanHeader)), time.Now())
		if delay > 0 {
			time.Sleep(delay)
		}
		c.SetBodyString("ok")
	}}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.ShutdownWithContext(ctx)
	})
	return st
}

func (st *SpanTarget) record(load string, at time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.spans[load]
	if s.Requests == 0 {
		s.First = at
	}
	s.Last = at
	s.Requests++
	st.spans[load] = s
}

// Span returns what the target saw of load.
func (st *SpanTarget) Span(load string) Span {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.spans[load]
}
