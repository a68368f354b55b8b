package loadgen

import (
	"github.com/benchq/benchq/internal/measure"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// barrier answers no request until n are in the handler at once, so the
// run reaches exactly n requests in flight; after 10 s it gives up waiting,
// so a broken engine fails the test instead of hanging it.
func barrier(n int) fasthttp.RequestHandler {
	var in atomic.Int64
	all := make(chan struct{})
	var once sync.Once
	return func(ctx *fasthttp.RequestCtx) {
		if in.Add(1) >= int64(n) {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
		case <-time.After(10 * time.Second):
		}
		ctx.SetBodyString("ok")
	}
}

func TestRunMaxInFlight(t *testing.T) {
	tests := []struct {
		name    string
		plan    measure.Plan
		barrier int // requests the server holds until all are in
		want    int64
	}{
		{"closed reaches concurrency", measure.Plan{Requests: 24, Concurrency: 8}, 8, 8},
		{"closed budget below concurrency", measure.Plan{Requests: 3, Concurrency: 8}, 3, 3},
		{"closed one worker", measure.Plan{Requests: 10, Concurrency: 1}, 1, 1},
		{"open reaches concurrency", measure.Plan{Requests: 12, Concurrency: 4, Rate: 1000}, 4, 4},
		{"open budget below concurrency", measure.Plan{Requests: 3, Concurrency: 8, Rate: 1000}, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, barrier(tt.barrier), nil)
			p := tt.plan
			p.URLs = []string{ts.URL + "/"}
			m := run(t, p)
			checkEq(t, "Complete", m.Complete, int64(p.Requests))
			checkEq(t, "MaxInFlight", m.MaxInFlight, tt.want)
			checkEq(t, "server's most open connections", ts.Stats.maxOpen.Load(), tt.want)
		})
	}
}

// TestRunLengthPerURL checks each response's length against the first
// response of its own URL, as http_load does: two documents of different
// sizes are no Length failure.
func TestRunLengthPerURL(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/small" {
			ctx.SetBody(fixedBody(100))
			return
		}
		ctx.SetBody(fixedBody(3000))
	}, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL + "/small", ts.URL + "/large"}, Requests: 400, Concurrency: 4, KeepAlive: true})
	checkEq(t, "Complete", m.Complete, 400)
	checkEq(t, "Failures.Length", m.Failures.Length, 0)
	checkEq(t, "Failed", m.Failed, 0)
	if m.DocumentLength != 100 && m.DocumentLength != 3000 {
		t.Errorf("DocumentLength = %d, want the first response's, 100 or 3000", m.DocumentLength)
	}
	if m.BodyReceivedBytes == 400*m.DocumentLength {
		t.Errorf("BodyReceivedBytes = %d: only one URL was fetched", m.BodyReceivedBytes)
	}
}

// TestRunConnectToWrite checks http_load's connect time: one sample per new
// connection, each at least the dial that ab's Connect measures.
func TestRunConnectToWrite(t *testing.T) {
	for _, keepAlive := range []bool{false, true} {
		t.Run(map[bool]string{false: "close", true: "keepalive"}[keepAlive], func(t *testing.T) {
			ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }, nil)
			m := run(t, measure.Plan{URLs: []string{ts.URL + "/"}, Requests: 200, Concurrency: 4, KeepAlive: keepAlive})
			checkEq(t, "Complete", m.Complete, 200)
			checkEq(t, "ConnectToWrite.Count", m.ConnectToWrite.Count, ts.Stats.conns.Load())
			if m.ConnectToWrite.Sum < m.Connect.Sum || m.ConnectToWrite.Max < m.Connect.Max {
				t.Errorf("ConnectToWrite sum %d max %d µs, below Connect's %d, %d: the dial alone",
					m.ConnectToWrite.Sum, m.ConnectToWrite.Max, m.Connect.Sum, m.Connect.Max)
			}
			if m.ConnectToWrite.Hist != nil {
				t.Errorf("ConnectToWrite has a histogram; http_load prints mean, max and min only")
			}
		})
	}
}

// TestRunTLSToPlainPort sends https to a plain-HTTP server: the handshake
// fails, and before any success the run aborts in ab's words.
func TestRunTLSToPlainPort(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("plain") }, nil)
	url := "https://" + ts.Addr + "/"
	m := run(t, measure.Plan{URLs: []string{url}, Requests: 20, Concurrency: 2})
	if want := "SSL handshake failed (1): not TLS: the server answered plain HTTP: tls: "; !strings.HasPrefix(m.Aborted, want) {
		t.Errorf("Aborted = %q, want %s...", m.Aborted, want)
	}
	checkEq(t, "TLSFailures.NotTLS", m.TLSFailures.NotTLS, m.Failures.TLSHandshake)
	checkEq(t, "Complete", m.Complete, 0)
	if m.Failures.TLSHandshake < 1 || m.Failures.TLSHandshake > 2 || m.Failures.Connect != 0 {
		t.Errorf("Failures = %+v, want 1..2 TLS handshake failures (abort at the first) and no connect failure", m.Failures)
	}
	if h := m.Failures.Hints(); len(h) != 1 || !strings.HasPrefix(h[0], "tls handshake: ") || !strings.Contains(h[0], "may not speak TLS") {
		t.Errorf("Hints = %q, want the TLS handshake hint", h)
	}

	m = run(t, measure.Plan{URLs: []string{url}, Requests: 20, Concurrency: 2, ContinueOnError: true})
	checkEq(t, "Aborted with -r", m.Aborted, "")
	checkEq(t, "Failures.TLSHandshake with -r", m.Failures.TLSHandshake, 20)
	checkEq(t, "TLSFailures.NotTLS with -r", m.TLSFailures.NotTLS, 20)
	checkEq(t, "Failed with -r", m.Failed, 20)
}
