package loadgen

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/benchq/benchq/internal/measure"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestReadResponseFraming reads wire responses as the engine does: each
// framing's body length, whether the connection may be reused, the error
// for a broken or oversized response, and what is left for the next one.
func TestReadResponseFraming(t *testing.T) {
	const next = "HTTP/1.1 200 OK" // the start of a following response
	big := strings.Repeat("X-Flood: "+strings.Repeat("a", 100)+"\r\n", 90)
	tests := []struct {
		name    string
		raw     string
		head    bool
		maxBody int64
		body    int64
		closing bool
		err     error // errors.Is; nil for success
		rest    string
	}{
		{name: "content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" + next, body: 5, rest: next},
		{name: "content-length zero", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" + next, rest: next},
		{name: "connection close", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", body: 2, closing: true},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;ext=1\r\nabc\r\nA \r\n0123456789\r\n0\r\n\r\n" + next,
			body: 18, rest: next},
		{name: "chunked with trailer", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n2\r\nok\r\n0\r\nX-Sum: 1\r\n\r\n" + next,
			body: 2, rest: next},
		{name: "until close, HTTP/1.0", raw: "HTTP/1.0 200 OK\r\n\r\nhello, ab\n", body: 10, closing: true},
		{name: "until close, HTTP/1.1", raw: "HTTP/1.1 200 OK\r\n\r\nhello", body: 5, closing: true},
		{name: "HEAD", raw: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + next, head: true, rest: next},
		{name: "204", raw: "HTTP/1.1 204 No Content\r\n\r\n" + next, rest: next},
		{name: "304 with a length", raw: "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n" + next, rest: next},
		{name: "100 continue first", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + next, body: 2, rest: next},
		{name: "101", raw: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", closing: true},

		{name: "body at the cap", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", maxBody: 5, body: 5},
		{name: "length above the cap", raw: "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhello!", maxBody: 5, closing: true, err: ErrBodyTooLarge},
		{name: "chunked at the cap", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", maxBody: 5, body: 5},
		{name: "chunked above the cap", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", maxBody: 5, closing: true, err: ErrBodyTooLarge},
		{name: "until close at the cap", raw: "HTTP/1.0 200 OK\r\n\r\nhello", maxBody: 5, body: 5, closing: true},
		{name: "until close above the cap", raw: "HTTP/1.0 200 OK\r\n\r\nhello!", maxBody: 5, closing: true, err: ErrBodyTooLarge},
		{name: "header above 8 KiB", raw: "HTTP/1.1 200 OK\r\n" + big + "Content-Length: 0\r\n\r\n", closing: true, err: ErrHeaderTooLarge},
		{name: "trailer above 8 KiB", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + big + "\r\n", closing: true, err: ErrHeaderTooLarge},

		{name: "length cut short", raw: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", closing: true, err: io.ErrUnexpectedEOF},
		{name: "chunk cut short", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nhello", closing: true, err: io.ErrUnexpectedEOF},
		{name: "no last chunk", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n", closing: true, err: io.ErrUnexpectedEOF},
		{name: "no trailer end", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n", closing: true, err: io.ErrUnexpectedEOF},
		{name: "bad chunk size", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", closing: true, err: errBrokenChunk},
		{name: "bare LF after size", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok\r\n0\r\n\r\n", closing: true, err: errBrokenChunk},
		{name: "chunk size overflows", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n", closing: true, err: errBrokenChunk},
		{name: "no CRLF after data", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n", closing: true, err: errBrokenChunk},
		{name: "chunk-size line above the buffer", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + strings.Repeat("e", 9000) + "\r\n",
			closing: true, err: errBrokenChunk},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := bufio.NewReaderSize(strings.NewReader(tt.raw), readBufferSize)
			var h fasthttp.ResponseHeader
			maxBody := tt.maxBody
			if maxBody == 0 {
				maxBody = measure.DefaultMaxBody
			}
			body, closing, err := readResponse(br, nil, &h, tt.head, maxBody)
			switch {
			case tt.err == nil && err != nil:
				t.Fatalf("readResponse() error %v, want none", err)
			case tt.err != nil && !errors.Is(err, tt.err):
				t.Fatalf("readResponse() error %v, want %v", err, tt.err)
			}
			if tt.err == nil {
				checkEq(t, "body", body, tt.body)
			}
			if tt.err == nil || errors.Is(err, ErrBodyTooLarge) || errors.Is(err, ErrHeaderTooLarge) {
				checkEq(t, "closing", closing || tt.err != nil, tt.closing)
			}
			if tt.err == nil {
				rest, _ := io.ReadAll(br)
				checkEq(t, "rest", string(rest), tt.rest)
			}
		})
	}
}

// zeros is an endless source of zero bytes that allocates nothing.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// allocatedBy returns the bytes the process allocated while f ran, the
// test server's included: deterministic enough to tell a body read through
// a buffer from one kept whole.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestRunLargeBodiesInBoundedMemory runs 256 MiB bodies, streamed by the
// server, in each framing: they are counted byte for byte, and the run
// allocates a small fraction of one body.
func TestRunLargeBodiesInBoundedMemory(t *testing.T) {
	const size = 256 << 20
	const n = 2
	framed := func(cl int) fasthttp.RequestHandler {
		return func(ctx *fasthttp.RequestCtx) {
			ctx.SetBodyStream(io.LimitReader(zeros{}, size), cl)
		}
	}
	tests := []struct {
		name string
		url  func(t *testing.T) (url string, written func() int64)
	}{
		{"content-length", func(t *testing.T) (string, func() int64) {
			ts := startServer(t, framed(size), nil)
			return ts.URL, ts.Stats.written.Load
		}},
		{"chunked", func(t *testing.T) (string, func() int64) {
			ts := startServer(t, framed(-1), nil)
			return ts.URL, ts.Stats.written.Load
		}},
		{"until close", func(t *testing.T) (string, func() int64) {
			s := startRawWriter(t, func(_ int, w io.Writer) bool {
				_, _ = io.WriteString(w, "HTTP/1.0 200 OK\r\nServer: raw\r\n\r\n")
				_, _ = io.Copy(w, io.LimitReader(zeros{}, size))
				return true
			})
			return "http://" + s.addr, func() int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.written }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, written := tt.url(t)
			var m *measure.Measurement
			alloc := allocatedBy(func() {
				m = run(t, measure.Plan{URLs: []string{url}, Requests: n, Concurrency: n, KeepAlive: true})
			})
			checkEq(t, "Complete", m.Complete, n)
			checkEq(t, "Failed", m.Failed, 0)
			checkEq(t, "DocumentLength", m.DocumentLength, size)
			checkEq(t, "BodyReceivedBytes", m.BodyReceivedBytes, n*size)
			checkEq(t, "TotalReceivedBytes", m.TotalReceivedBytes, settled(written, m.TotalReceivedBytes))
			t.Logf("%d bodies of %d MiB: %d KiB allocated", n, size>>20, alloc>>10)
			if alloc > size/16 {
				t.Errorf("the run allocated %d MiB for %d bodies of %d MiB, want under %d MiB: bodies are being kept",
					alloc>>20, n, size>>20, size>>24)
			}
		})
	}
}

// TestRunEndlessBodyCut serves bodies that never end, chunked and until
// close: each is cut at the plan's cap and counted as BodyTooLarge, and
// its connection is closed (the next request opens a new one).
func TestRunEndlessBodyCut(t *testing.T) {
	const maxBody = 4 << 20
	const n = 6
	const bound = 256 << 20 // each server stops here, should the engine never cut
	tests := []struct {
		name  string
		start func(t *testing.T) (url string, conns func() int64)
	}{
		{"chunked", func(t *testing.T) (string, func() int64) {
			ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
				ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
					chunk := make([]byte, 64<<10)
					for sent := 0; sent < bound; sent += len(chunk) {
						if _, err := w.Write(chunk); err != nil || w.Flush() != nil {
							return
						}
					}
				})
			}, nil)
			return ts.URL, ts.Stats.conns.Load
		}},
		{"until close", func(t *testing.T) (string, func() int64) {
			s := startRawWriter(t, func(_ int, w io.Writer) bool {
				_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\nServer: raw\r\n\r\n")
				_, _ = io.Copy(w, io.LimitReader(zeros{}, bound))
				return true
			})
			return "http://" + s.addr, func() int64 { s.mu.Lock(); defer s.mu.Unlock(); return int64(s.conns) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, conns := tt.start(t)
			var m *measure.Measurement
			alloc := allocatedBy(func() {
				m = run(t, measure.Plan{URLs: []string{url}, Requests: n, Concurrency: 2, KeepAlive: true, MaxBody: maxBody})
			})
			checkEq(t, "Complete", m.Complete, 0)
			checkEq(t, "Failures.BodyTooLarge", m.Failures.BodyTooLarge, n)
			checkEq(t, "Failed", m.Failed, n)
			checkEq(t, "BodyReceivedBytes", m.BodyReceivedBytes, 0)
			checkEq(t, "connections", conns(), n)
			if m.TotalReceivedBytes < n*maxBody {
				t.Errorf("TotalReceivedBytes = %d, want at least the %d bytes read up to each cut", m.TotalReceivedBytes, n*maxBody)
			}
			if h := m.Failures.Hints(); len(h) != 1 || !strings.HasPrefix(h[0], "body too large") {
				t.Errorf("Hints() = %q, want one body too large hint", h)
			}
			if alloc > 16<<20 {
				t.Errorf("the run allocated %d MiB, want under 16 MiB", alloc>>20)
			}
		})
	}
}

// TestRunBodyCap runs a fixed 1000-byte body against caps around it: a
// body at the cap completes; above it the request fails before the body
// is read (its Content-Length says so) and the connection is closed.
func TestRunBodyCap(t *testing.T) {
	for _, tt := range []struct {
		maxBody       int64
		complete, cut int64
		wantConns     int64
		wantBodyBytes int64
		wantDocLength int64
	}{
		{maxBody: 1000, complete: 10, wantConns: 1, wantBodyBytes: 10 * 1000, wantDocLength: 1000},
		{maxBody: 999, cut: 10, wantConns: 10},
	} {
		t.Run(fmt.Sprint(tt.maxBody), func(t *testing.T) {
			ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBody(fixedBody(1000)) }, nil)
			m := run(t, measure.Plan{URLs: []string{ts.URL}, Requests: 10, KeepAlive: true, MaxBody: tt.maxBody})
			checkEq(t, "Complete", m.Complete, tt.complete)
			checkEq(t, "Failures.BodyTooLarge", m.Failures.BodyTooLarge, tt.cut)
			checkEq(t, "Failed", m.Failed, tt.cut)
			checkEq(t, "BodyReceivedBytes", m.BodyReceivedBytes, tt.wantBodyBytes)
			checkEq(t, "DocumentLength", m.DocumentLength, tt.wantDocLength)
			checkEq(t, "server connections", ts.Stats.conns.Load(), tt.wantConns)
		})
	}
}

// TestRunShortBody serves a Content-Length of 1000 with 500 bytes, then
// closes: a Receive failure, every byte read counted.
func TestRunShortBody(t *testing.T) {
	const resp = "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
	s := startRawServer(t, func(int) (string, bool) { return resp + strings.Repeat("x", 500), true })
	m := run(t, measure.Plan{URLs: []string{"http://" + s.addr}, Requests: 5, KeepAlive: true})
	checkEq(t, "Complete", m.Complete, 0)
	checkEq(t, "Failures.Receive", m.Failures.Receive, 5)
	checkEq(t, "Failed", m.Failed, 5)
	checkEq(t, "TotalReceivedBytes", m.TotalReceivedBytes, 5*int64(len(resp)+500))
}

// TestRunHeaderFlood serves headers past the 8 KiB cap, from fasthttp and
// as an endless stream of header lines: each is a HeaderTooLarge failure
// and its connection is closed. A header just under the cap completes.
func TestRunHeaderFlood(t *testing.T) {
	fromFasthttp := func(valueLen int) func(t *testing.T) (string, func() int64) {
		return func(t *testing.T) (string, func() int64) {
			value := strings.Repeat("a", valueLen)
			ts := startServer(t, func(ctx *fasthttp.RequestCtx) {
				ctx.Response.Header.Set("X-Flood", value)
				ctx.SetBodyString("ok")
			}, nil)
			return ts.URL, ts.Stats.conns.Load
		}
	}
	tests := []struct {
		name     string
		start    func(t *testing.T) (url string, conns func() int64)
		complete int64
	}{
		{"7 KiB header", fromFasthttp(7 << 10), 5},
		{"10 KiB header", fromFasthttp(10 << 10), 0},
		{"endless header", func(t *testing.T) (string, func() int64) {
			s := startRawWriter(t, func(_ int, w io.Writer) bool {
				_, _ = io.WriteString(w, "HTTP/1.1 200 OK\r\n")
				line := []byte("X-Flood: " + strings.Repeat("a", 1000) + "\r\n")
				for range 64 << 10 { // 64 MiB at most, should the engine never give up
					if _, err := w.Write(line); err != nil {
						break
					}
				}
				return true
			})
			return "http://" + s.addr, func() int64 { s.mu.Lock(); defer s.mu.Unlock(); return int64(s.conns) }
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, conns := tt.start(t)
			m := run(t, measure.Plan{URLs: []string{url}, Requests: 5, KeepAlive: true})
			checkEq(t, "Complete", m.Complete, tt.complete)
			checkEq(t, "Failures.HeaderTooLarge", m.Failures.HeaderTooLarge, 5-tt.complete)
			checkEq(t, "Failed", m.Failed, 5-tt.complete)
			wantConns := int64(5)
			if tt.complete > 0 {
				wantConns = 1
			}
			checkEq(t, "connections", conns(), wantConns)
			if h := m.Failures.Hints(); tt.complete == 0 && (len(h) != 1 || !strings.HasPrefix(h[0], "header too large")) {
				t.Errorf("Hints() = %q, want one header too large hint", h)
			}
		})
	}
}
