package loadgen

import (
	"context"
	"github.com/benchq/benchq/internal/measure"
	"runtime"
	"testing"

	"github.com/valyala/fasthttp"
)

// benchRun measures whole runs of b.N requests against an in-process
// fasthttp server on loopback: ns/op and allocs/op are per request, the
// run's setup amortized (client and server share the machine's CPUs).
func benchRun(b *testing.B, p measure.Plan) {
	benchRunOn(b, p, func(h fasthttp.RequestHandler) *testServer { return startServer(b, h, nil) })
}

func benchRunOn(b *testing.B, p measure.Plan, start func(fasthttp.RequestHandler) *testServer) {
	body := fixedBody(7638) // the seeds' HTML page
	ts := start(func(ctx *fasthttp.RequestCtx) { ctx.SetBody(body) })
	p.URLs = []string{ts.URL + "/page.html"}
	concurrency := max(p.Concurrency, 1)
	// Warm the server's pools so they are not charged to the first op.
	p.Requests = 100
	if _, err := Run(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	p.Requests = max(b.N, concurrency)
	b.ReportAllocs()
	b.ResetTimer()
	m, err := Run(context.Background(), p)
	b.StopTimer()
	if err != nil || m.Complete != int64(p.Requests) || m.Failed != 0 {
		b.Fatalf("Run = %d complete, %d failed, %v; want %d, 0, nil", m.Complete, m.Failed, err, p.Requests)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
}

func BenchmarkKeepAlive(b *testing.B)   { benchRun(b, measure.Plan{KeepAlive: true}) }
func BenchmarkKeepAliveC8(b *testing.B) { benchRun(b, measure.Plan{KeepAlive: true, Concurrency: 8}) }
func BenchmarkNoKeepAlive(b *testing.B) { benchRun(b, measure.Plan{}) }

// BenchmarkKeepAliveHTTP10 is ab's request on a kept-alive connection: the
// answer is HTTP/1.1 with keep-alive, as nginx gives it.
func BenchmarkKeepAliveHTTP10(b *testing.B) {
	benchRun(b, measure.Plan{KeepAlive: true, HTTPVersion: measure.HTTP10})
}

// BenchmarkKeepAliveTLS is BenchmarkKeepAlive over TLS (self-signed,
// verification skipped): the handshake is paid once per connection, so
// allocs/op should match the plain path's.
func BenchmarkKeepAliveTLS(b *testing.B) {
	benchRunOn(b, measure.Plan{KeepAlive: true, TLS: measure.TLS{SkipVerify: true}},
		func(h fasthttp.RequestHandler) *testServer { return startTLSServer(b, h) })
}

// BenchmarkNoKeepAliveTLS pays a full handshake per request, as ab does
// over https without -k.
func BenchmarkNoKeepAliveTLS(b *testing.B) {
	benchRunOn(b, measure.Plan{TLS: measure.TLS{SkipVerify: true}},
		func(h fasthttp.RequestHandler) *testServer { return startTLSServer(b, h) })
}
