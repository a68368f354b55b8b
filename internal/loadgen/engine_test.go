package loadgen

import (
	"context"
	"errors"
	"github.com/benchq/benchq/internal/measure"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func TestRunFixedBody(t *testing.T) {
	// 1000 bytes fit the read buffer; 25 600 (seed 000's image) and
	// 300 000 (several skips) are mostly skipped past it, on the socket.
	for _, size := range []int{1000, 25600, 300000} {
		for _, keepAlive := range []bool{false, true} {
			name := map[bool]string{false: "close", true: "keepalive"}[keepAlive] + "/" + strconv.Itoa(size)
			t.Run(name, func(t *testing.T) { testRunFixedBody(t, size, keepAlive) })
		}
	}
}

func testRunFixedBody(t *testing.T, size int, keepAlive bool) {
	body := fixedBody(size)
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBody(body) }, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL + "/fixed?x=1"}, Requests: 200, Concurrency: 4, KeepAlive: keepAlive})

	checkEq(t, "Complete", m.Complete, 200)
	checkEq(t, "Failed", m.Failed, 0)
	checkEq(t, "StatusCodes[200]", m.StatusCodes[200], 200)
	checkEq(t, "DocumentLength", m.DocumentLength, int64(size))
	checkEq(t, "BodyReceivedBytes", m.BodyReceivedBytes, int64(200*size))
	checkEq(t, "TotalReceivedBytes", m.TotalReceivedBytes, settled(ts.Stats.written.Load, m.TotalReceivedBytes))
	checkEq(t, "TotalSentBytes", m.TotalSentBytes, ts.Stats.read.Load())
	checkEq(t, "Total.Count", m.Total.Count, 200)
	checkEq(t, "ServerSoftware", m.ServerSoftware, "benchq-test/1.0")
	checkEq(t, "DocumentPath", m.DocumentPath, "/fixed?x=1")
	checkEq(t, "ServerHostname", m.ServerHostname, "127.0.0.1")
	wantConns, wantKA := int64(200), int64(0)
	if keepAlive {
		wantConns, wantKA = 4, 200
	}
	checkEq(t, "server connections", ts.Stats.conns.Load(), wantConns)
	checkEq(t, "KeepAliveRequests", m.KeepAliveRequests, wantKA)
	if m.Elapsed <= 0 || m.Total.Max < m.Total.Min || m.Total.Quantile(0.5) > m.Total.Max {
		t.Errorf("Elapsed %v, Total min %d max %d p50 %d: inconsistent", m.Elapsed, m.Total.Min, m.Total.Max, m.Total.Quantile(0.5))
	}
	if keepAlive && m.Connect.Quantile(0.5) != 0 {
		t.Errorf("keep-alive Connect median = %d µs, want 0 on reused connections", m.Connect.Quantile(0.5))
	}
}

// settled reads a server-side counter once it equals want, or after a
// second: the server counts a write after its Write returns, and the client
// may have read those bytes and ended the run before that goroutine runs.
func settled(read func() int64, want int64) int64 {
	deadline := time.Now().Add(time.Second)
	for read() != want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return read()
}

func TestRunVaryingLength(t *testing.T) {
	for _, accept := range []bool{false, true} {
		var n atomic.Int64
		ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
			ctx.SetBody(fixedBody(10 + int(n.Add(1)-1)%3)) // 10, 11, 12, 10, ...
		}, nil)
		m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 30, KeepAlive: true, AcceptVariableLength: accept})
		want := int64(20)
		if accept {
			want = 0
		}
		checkEq(t, "Complete", m.Complete, 30)
		checkEq(t, "Failures.Length (-l "+map[bool]string{false: "off", true: "on"}[accept]+")", m.Failures.Length, want)
		checkEq(t, "Failed", m.Failed, want)
		checkEq(t, "DocumentLength", m.DocumentLength, 10)
	}
}

func TestRunNon2xx(t *testing.T) {
	for _, code := range []int{404, 500} {
		ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.Error("nope", code) }, nil)
		m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 20, Concurrency: 2})
		checkEq(t, "Complete", m.Complete, 20)
		checkEq(t, "Failed", m.Failed, 0)
		checkEq(t, "Non2xx", m.Non2xx, 20)
		checkEq(t, "StatusCodes", m.StatusCodes[code], 20)
	}
}

func TestRunResetMidResponse(t *testing.T) {
	var n atomic.Int64
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		if n.Add(1)%2 == 1 {
			ctx.SetBodyString("ok")
			return
		}
		ctx.HijackSetNoResponse(true)
		ctx.Hijack(func(c net.Conn) {
			// Longer than the read buffer holds: the rest is skipped on the
			// socket, where the reset must still be seen.
			_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("partial", 2000)))
			if cc, ok := c.(*countingConn); ok {
				c = cc.Conn
			}
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close with RST
			}
			_ = c.Close()
		})
	}, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 20})
	checkEq(t, "Complete", m.Complete, 10)
	checkEq(t, "Failures.Receive", m.Failures.Receive, 10)
	checkEq(t, "Failed", m.Failed, 10)
	checkEq(t, "Aborted", m.Aborted, "")
}

func TestRunTimeout(t *testing.T) {
	release := make(chan struct{})
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
	}, nil)
	t.Cleanup(func() { close(release) })
	const timeout = 150 * time.Millisecond
	began := time.Now()
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 4, Concurrency: 2, Timeout: timeout})
	took := time.Since(began)
	checkEq(t, "Failures.Timeout", m.Failures.Timeout, 4)
	checkEq(t, "Failed", m.Failed, 4)
	checkEq(t, "Complete", m.Complete, 0)
	// Two rounds of two requests, each cut at the timeout.
	if took < 2*timeout*99/100 || took > 2*timeout+time.Second {
		t.Errorf("run took %v, want about %v", took, 2*timeout)
	}
	if len(m.Failures.Hints()) != 1 || !strings.HasPrefix(m.Failures.Hints()[0], "timeout") {
		t.Errorf("Hints() = %q, want one timeout hint", m.Failures.Hints())
	}
}

func TestRunWaitingIncludesFirstByteDelay(t *testing.T) {
	const delay = 40 * time.Millisecond
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(delay)
		ctx.SetBodyString("late")
	}, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 4, KeepAlive: true})
	checkEq(t, "Complete", m.Complete, 4)
	// The written stamp is read after the write returns: a client thread
	// descheduled between the two (a loaded machine) stamps it after the
	// server began its delay, so Waiting may fall short by that much
	// (185 µs seen in CI); Total starts before the write.
	if want, slack := delay.Microseconds(), int64(time.Millisecond/time.Microsecond); m.Waiting.Min < want-slack || m.Total.Min < want {
		t.Errorf("Waiting.Min = %d µs, Total.Min = %d µs, want >= %d (less 1 ms of scheduling) and >= %d", m.Waiting.Min, m.Total.Min, want, want)
	}
	if m.Waiting.Max > m.Total.Max {
		t.Errorf("Waiting.Max = %d µs > Total.Max = %d µs", m.Waiting.Max, m.Total.Max)
	}
}

func TestRunKeepAliveServerClosesAfterK(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("hello") },
		func(s *fasthttp.Server) { s.MaxRequestsPerConn = 3 })
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 30, KeepAlive: true, RecordSamples: true})
	checkEq(t, "Complete", m.Complete, 30)
	checkEq(t, "Failed", m.Failed, 0)
	checkEq(t, "server connections", ts.Stats.conns.Load(), 10)
	dialed := 0
	for _, s := range m.Samples {
		if s.Connect > 0 {
			dialed++
		}
	}
	checkEq(t, "samples with a connect time", dialed, 10)
	checkEq(t, "len(Samples)", len(m.Samples), 30)
	// The third response on each connection says close: not kept alive.
	checkEq(t, "KeepAliveRequests", m.KeepAliveRequests, 20)
}

func TestRunKeepAliveIdleCloseRetried(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("hello") },
		func(s *fasthttp.Server) { s.IdleTimeout = 10 * time.Millisecond })
	// Open model at 20/s: the connection idles 50 ms between requests and
	// the server closes it silently each time.
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 6, Rate: 20, KeepAlive: true})
	checkEq(t, "Complete", m.Complete, 6)
	checkEq(t, "Failed", m.Failed, 0)
	if c := ts.Stats.conns.Load(); c < 4 {
		t.Errorf("server connections = %d, want about 6 (idle closes)", c)
	}
}

func TestRunConnectionRefused(t *testing.T) {
	url := "http://" + freeAddr(t) + "/"
	m := run(t, measure.Plan{URLs: []string{url}, Requests: 20, Concurrency: 2})
	if m.Aborted == "" || !strings.Contains(m.Aborted, "refused") {
		t.Errorf("Aborted = %q, want a connection refused message", m.Aborted)
	}
	checkEq(t, "Complete", m.Complete, 0)
	if m.Failures.Connect < 1 || m.Failures.Connect > 2 {
		t.Errorf("Failures.Connect = %d, want 1..2 (abort at the first refusal)", m.Failures.Connect)
	}

	m = run(t, measure.Plan{URLs: []string{url}, Requests: 20, Concurrency: 2, ContinueOnError: true})
	checkEq(t, "Aborted with -r", m.Aborted, "")
	checkEq(t, "Failures.Connect with -r", m.Failures.Connect, 20)
	checkEq(t, "Failed with -r", m.Failed, 20)
}

func TestRunDurationEndsOnTime(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(time.Millisecond)
		ctx.SetBodyString("x")
	}, nil)
	const d = 300 * time.Millisecond
	began := time.Now()
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Duration: d, Concurrency: 2, KeepAlive: true})
	took := time.Since(began)
	// Upper bounds leave room for -race on a loaded 2-core CI machine.
	if took < d || took > d+800*time.Millisecond {
		t.Errorf("run took %v, want %v (+ little)", took, d)
	}
	if m.Elapsed < d || m.Elapsed > d+500*time.Millisecond {
		t.Errorf("Elapsed = %v, want about %v", m.Elapsed, d)
	}
	if m.Complete < 10 || m.Failed != 0 {
		t.Errorf("Complete = %d, Failed = %d, want many and 0", m.Complete, m.Failed)
	}
}

func TestRunCancel(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int64
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		if n.Add(1) > 5 { // five answers, then a server that hangs
			<-release
		}
		ctx.SetBodyString("x")
	}, nil)
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	began := time.Now()
	m, err := Run(ctx, measure.Plan{URLs: []string{ts.URL}, Requests: 1000, Concurrency: 3})
	took := time.Since(began)
	if err != nil {
		t.Fatalf("Run() error = %v, want nil on cancel", err)
	}
	if took > 200*time.Millisecond+time.Second {
		t.Errorf("Run returned %v after start, want within 1s of the cancel at 200ms", took)
	}
	checkEq(t, "Canceled", m.Canceled, true)
	checkEq(t, "Complete", m.Complete, 5)
	checkEq(t, "Failed", m.Failed, 0)
}

func TestRunOpenModelShowsStall(t *testing.T) {
	var stallMu chanMutex = make(chan struct{}, 1)
	var n atomic.Int64
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		stallMu.lock() // the whole server stalls, as a GC pause would
		if n.Add(1) == 100 {
			time.Sleep(500 * time.Millisecond)
		}
		stallMu.unlock()
		ctx.SetBodyString("x")
	}, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 1000, Rate: 1000, Concurrency: 4, KeepAlive: true})
	checkEq(t, "Complete", m.Complete, 1000)
	if p99 := m.Total.Quantile(0.99); p99 < 300_000 {
		t.Errorf("open model corrected p99 = %d µs, want >= 300000 (the stall)", p99)
	}
	if m.Open == nil || m.Open.RequestedRate != 1000 || m.Open.LateStarts < 100 {
		t.Fatalf("Open = %+v, want requested 1000 and >= 100 late starts", m.Open)
	} else if m.Open.Uncorrected.Count != 1000 || m.Open.Uncorrected.Quantile(0.9) > m.Total.Quantile(0.9) {
		t.Errorf("Uncorrected p90 = %d µs, corrected p90 = %d µs, want uncorrected <= corrected",
			m.Open.Uncorrected.Quantile(0.9), m.Total.Quantile(0.9))
	}
	// The stall delays the starts queued behind it: the send lag holds
	// every start, its tail is the stall, and its count past 1 ms is the
	// late starts'.
	lag := &m.Open.SendLag
	if lag.Count != 1000 || lag.Hist == nil || lag.Max < 300_000 {
		t.Fatalf("SendLag: %d starts, max %d µs; want 1000 and >= 300000 (the stall)", lag.Count, lag.Max)
	}
	if late := lag.Count - countUpTo(lag, lateAfter.Microseconds()); late != m.Open.LateStarts {
		t.Errorf("SendLag holds %d starts over 1 ms, LateStarts = %d", late, m.Open.LateStarts)
	}

	n.Store(0)
	closed := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 1000, Concurrency: 1, KeepAlive: true})
	if p99 := closed.Total.Quantile(0.99); p99 >= 300_000 {
		t.Errorf("closed model p99 = %d µs, want the stall hidden (< 300000), as ab hides it", p99)
	}
	if closed.Total.Max < 500_000 {
		t.Errorf("closed model max = %d µs, want the stall (>= 500000)", closed.Total.Max)
	}
}

type chanMutex chan struct{}

func (m chanMutex) lock()   { m <- struct{}{} }
func (m chanMutex) unlock() { <-m }

func TestRunRequestOptions(t *testing.T) {
	var host, method, ctype, order atomic.Value
	var bodyBytes atomic.Int64
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		host.Store(string(ctx.Host()))
		method.Store(string(ctx.Method()))
		ctype.Store(string(ctx.Request.Header.ContentType()))
		raw := string(ctx.Request.Header.Header())
		order.Store(strings.Index(raw, "X-First") < strings.Index(raw, "X-Second"))
		bodyBytes.Add(int64(len(ctx.PostBody())))
	}, nil)
	body := fixedBody(777)
	m := run(t, measure.Plan{
		URLs:     []string{ts.URL + "/post"},
		Requests: 10,
		Body:     body,
		Headers:  []measure.Header{{Key: "X-First", Value: "1"}, {Key: "Host", Value: "example.test:8080"}, {Key: "X-Second", Value: "2"}},
	})
	checkEq(t, "Complete", m.Complete, 10)
	checkEq(t, "Host seen", host.Load(), any("example.test:8080"))
	checkEq(t, "method seen", method.Load(), any("POST"))
	checkEq(t, "content type seen", ctype.Load(), any("text/plain"))
	checkEq(t, "headers in order", order.Load(), any(true))
	checkEq(t, "body bytes seen", bodyBytes.Load(), 10*777)
	checkEq(t, "TotalSentBytes", m.TotalSentBytes, ts.Stats.read.Load())
	checkEq(t, "Method", m.Method, "POST")
}

func TestRunHeadAndSeveralURLs(t *testing.T) {
	var a, b atomic.Int64
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/a" {
			a.Add(1)
		} else {
			b.Add(1)
		}
		ctx.SetBody(fixedBody(100))
	}, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL + "/a", ts.URL + "/b"}, Method: "HEAD", Requests: 200, Concurrency: 2, KeepAlive: true})
	checkEq(t, "Complete", m.Complete, 200)
	checkEq(t, "Failed", m.Failed, 0)
	checkEq(t, "BodyReceivedBytes (HEAD)", m.BodyReceivedBytes, 0)
	if a.Load() < 50 || b.Load() < 50 {
		t.Errorf("requests per URL = %d, %d, want both chosen (~100 each)", a.Load(), b.Load())
	}
}

func TestRunTLS(t *testing.T) {
	ts := startTLSServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("secure") })
	g := &stubGuard{}
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 20, Concurrency: 2, KeepAlive: true, Guard: g, TLS: measure.TLS{SkipVerify: true}})
	checkEq(t, "Complete", m.Complete, 20)
	// A worker connects on its first request, so under a slow scheduler
	// one worker may take all 20 before the other wakes: what must hold is
	// one admission per connection the server accepted.
	checkEq(t, "admitted connects", g.admits.Load(), ts.Stats.conns.Load())
	if n := g.admits.Load(); n < 1 || n > 2 {
		t.Errorf("admitted connects = %d, want 1 or 2 (c=2)", n)
	}
	checkEq(t, "ServerPort", strconv.Itoa(m.ServerPort), ts.Addr[strings.LastIndex(ts.Addr, ":")+1:])
	if !strings.HasPrefix(m.TLSProtocol, "TLSv1.") {
		t.Errorf("TLSProtocol = %q, want TLSv1.x,...", m.TLSProtocol)
	}
}

func TestRunConcurrencyNotCappedAt512(t *testing.T) {
	const c = 600
	var inFlight atomic.Int64
	all := make(chan struct{})
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		if inFlight.Add(1) == c {
			close(all)
		}
		select { // hold every request until all c are in flight
		case <-all:
		case <-time.After(5 * time.Second):
		}
		ctx.SetBodyString("x")
	}, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: c, Concurrency: c, KeepAlive: true})
	checkEq(t, "Complete", m.Complete, c)
	checkEq(t, "max open connections on the server", ts.Stats.maxOpen.Load(), c)
}

func TestRunProgress(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(time.Millisecond)
		ctx.SetBodyString("x")
	}, nil)
	var snaps []measure.Snapshot // Progress is called from one goroutine, ended before Run returns
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Duration: 250 * time.Millisecond, Concurrency: 2, KeepAlive: true,
		ProgressInterval: 50 * time.Millisecond, Progress: func(s measure.Snapshot) { snaps = append(snaps, s) }})
	if len(snaps) < 3 {
		t.Fatalf("Progress called %d times, want >= 3", len(snaps))
	}
	last := snaps[len(snaps)-1]
	if last.Completed <= snaps[0].Completed || last.Completed > m.Complete || last.CurrentRPS <= 0 || last.BytesRead <= 0 {
		t.Errorf("snapshots %+v ... %+v, want growing counts up to %d and a rate", snaps[0], last, m.Complete)
	}
	if last.InFlight < 0 || last.InFlight > 2 {
		t.Errorf("InFlight = %d, want 0..2", last.InFlight)
	}
}

func TestRunInvalidPlan(t *testing.T) {
	_, err := Run(context.Background(), measure.Plan{URLs: []string{"ftp://127.0.0.1/"}, Requests: 1})
	if !errors.Is(err, measure.ErrInvalidPlan) || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("Run(ftp URL) error = %v, want an invalid plan naming the scheme", err)
	}
}

func checkEq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// TestRunStartAt: a run given a start instant sends nothing before it and
// starts its clock there; a cancel during the wait ends the run at once,
// before any request.
func TestRunStartAt(t *testing.T) {
	var first atomic.Int64 // unix ns of the first request the server saw
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
		first.CompareAndSwap(0, time.Now().UnixNano())
		ctx.SetBodyString("x")
	}, nil)
	at := time.Now().Add(300 * time.Millisecond)
	m, err := Run(context.Background(), measure.Plan{URLs: []string{ts.URL}, Requests: 20, Concurrency: 2, StartAt: at})
	if err != nil {
		t.Fatal(err)
	}
	if m.Started.Before(at.Round(0)) {
		t.Errorf("clock started at %s, before StartAt %s", m.Started.Format(time.StampMicro), at.Format(time.StampMicro))
	}
	if got := time.Unix(0, first.Load()); got.Before(at.Round(0)) {
		t.Errorf("first request at %s, before StartAt %s", got.Format(time.StampMicro), at.Format(time.StampMicro))
	}
	checkEq(t, "Complete", m.Complete, 20)

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	began := time.Now()
	m, err = Run(ctx, measure.Plan{URLs: []string{ts.URL}, Requests: 20, Concurrency: 2, StartAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("canceled wait returned after %s, want soon after the cancel", took)
	}
	checkEq(t, "Canceled", m.Canceled, true)
	checkEq(t, "Complete", m.Complete, 0)
}

// countUpTo is how many of ph's values are at most v µs (exact below
// 2048, where the histogram has a bucket per µs).
func countUpTo(ph *measure.Phase, v int64) int64 {
	var n int64
	for _, b := range ph.Hist.Distribution() {
		if b.To <= v {
			n += b.Count
		}
	}
	return n
}

// TestRunOpenModelSendLagCountsFailures: a failed request started too,
// and its start's error is in the send lag as a completed one's is.
func TestRunOpenModelSendLagCountsFailures(t *testing.T) {
	url := "http://" + freeAddr(t) + "/"
	m := run(t, measure.Plan{URLs: []string{url}, Requests: 40, Rate: 2000, Concurrency: 2, ContinueOnError: true})
	checkEq(t, "Failures.Connect", m.Failures.Connect, 40)
	checkEq(t, "SendLag.Count", m.Open.SendLag.Count, 40)
	if m.Open.SendLag.Hist == nil || m.Open.SendLag.Hist.TotalCount() != 40 {
		t.Errorf("SendLag's histogram = %v, want its 40 starts", m.Open.SendLag.Hist)
	}
}

// TestRunOpenModelNeverStartsEarly: a start due within sleepFloor waits
// for its time instead of going at once, so the send lag is never
// negative. At 20k/s two workers take slots a few µs ahead of their time
// all the time.
func TestRunOpenModelNeverStartsEarly(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("x") }, nil)
	m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 2000, Rate: 20000, Concurrency: 2, KeepAlive: true, RecordSamples: true})
	checkEq(t, "Complete", m.Complete, 2000)
	early := 0
	for _, s := range m.Samples {
		// Total runs from the intended start, Connect + Processing from
		// the actual one.
		if lag := s.Total - s.Connect - s.Processing; lag < 0 {
			early++
		}
	}
	if early > 0 {
		t.Errorf("%d of %d requests started before their intended time", early, len(m.Samples))
	}
}
