package loadgen

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

func h2Handler(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "goh2/1.0")
		_, _ = w.Write(body)
	})
}

func TestRunH2CountsAndStreams(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 3000)
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // long enough that the streams overlap
		h2Handler(body).ServeHTTP(w, r)
	})
	for _, tc := range []struct {
		name    string
		start   func(testing.TB, http.Handler) *testservers.H2Server
		c, m, n int
	}{
		{"h2c", testservers.StartH2C, 2, 8, 400},
		{"h2c one stream", testservers.StartH2C, 3, 1, 90},
		{"tls alpn", testservers.StartH2TLS, 2, 5, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := tc.start(t, slow)
			// httptest's certificate is self-signed.
			m := run(t, measure.Plan{URLs: []string{ts.URL + "/doc"}, HTTPVersion: measure.HTTP2,
				Concurrency: tc.c, MaxStreams: tc.m, Requests: tc.n, TLS: measure.TLS{SkipVerify: true}})
			checkEq(t, "Complete", m.Complete, int64(tc.n))
			checkEq(t, "Failed", m.Failed, 0)
			checkEq(t, "server requests", ts.Requests(), int64(tc.n))
			checkEq(t, "server protocols", ts.Protos()["HTTP/2.0"], int64(tc.n))
			checkEq(t, "StatusCodes[200]", m.StatusCodes[200], int64(tc.n))
			checkEq(t, "DocumentLength", m.DocumentLength, 3000)
			checkEq(t, "ServerSoftware", m.ServerSoftware, "goh2/1.0")
			checkEq(t, "BodyReceivedBytes", m.BodyReceivedBytes, int64(tc.n*3000))
			checkEq(t, "Connections", m.Connections, int64(tc.c))
			checkEq(t, "server connections", ts.Conns(), int64(tc.c))
			checkEq(t, "MaxStreams", m.MaxStreams, tc.m)
			checkEq(t, "server's most streams on a connection", ts.MaxActive(), tc.m)
			checkEq(t, "Total.Count", m.Total.Count, int64(tc.n))
			checkEq(t, "HTTPVersion", m.HTTPVersion, measure.HTTP2)
			if strings.HasPrefix(ts.URL, "http://") {
				checkEq(t, "TotalReceivedBytes", m.TotalReceivedBytes, settled(ts.Written, m.TotalReceivedBytes))
				checkEq(t, "TotalSentBytes", m.TotalSentBytes, settled(ts.Read, m.TotalSentBytes))
				checkEq(t, "Handshake.Count", m.Handshake.Count, 0)
			} else {
				if m.TLSProtocol == "" {
					t.Error("TLSProtocol empty on an https run")
				}
				// One handshake per connection, counted with its first request.
				checkEq(t, "Handshake.Count", m.Handshake.Count, int64(tc.c))
			}
			if m.Connect.Count != int64(tc.n) || m.Waiting.Max > m.Total.Max {
				t.Errorf("Connect count %d, Waiting max %d, Total max %d: inconsistent", m.Connect.Count, m.Waiting.Max, m.Total.Max)
			}
		})
	}
}

func TestRunH2PostBody(t *testing.T) {
	var got []int
	ts := testservers.StartH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := new(bytes.Buffer)
		_, _ = b.ReadFrom(r.Body)
		if b.Len() != 200000 {
			got = append(got, b.Len())
		}
		_, _ = w.Write([]byte("ok"))
	}))
	// 200 kB is past the initial 64 KiB window: the body goes out as the
	// server's WINDOW_UPDATEs come in.
	m := run(t, measure.Plan{URLs: []string{ts.URL + "/post"}, HTTPVersion: measure.HTTP2, Body: bytes.Repeat([]byte("b"), 200000),
		Concurrency: 2, MaxStreams: 3, Requests: 30})
	checkEq(t, "Complete", m.Complete, 30)
	checkEq(t, "Failed", m.Failed, 0)
	if len(got) > 0 {
		t.Errorf("server read bodies of %v bytes, want 200000", got)
	}
}

func TestRunH2FailureClasses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		srv   func() *testservers.RawH2
		plan  measure.Plan
		check func(t *testing.T, m *measure.Measurement, s *testservers.RawH2)
	}{
		{"rst every 4th", func() *testservers.RawH2 { return &testservers.RawH2{ResetEvery: 4, Body: []byte("hello")} },
			measure.Plan{Concurrency: 2, MaxStreams: 4, Requests: 400},
			func(t *testing.T, m *measure.Measurement, s *testservers.RawH2) {
				checkEq(t, "StreamReset", m.Failures.StreamReset, 100)
				checkEq(t, "Complete", m.Complete, 300)
				checkEq(t, "Failed", m.Failed, 100)
				checkEq(t, "codes", m.H2ErrorCodes["RST_STREAM REFUSED_STREAM"], 100)
				checkEq(t, "Connections", m.Connections, 2)
			}},
		{"goaway after 50", func() *testservers.RawH2 { return &testservers.RawH2{GoAwayAfter: 50, Body: []byte("hello")} },
			measure.Plan{Concurrency: 2, MaxStreams: 10, Requests: 500},
			func(t *testing.T, m *measure.Measurement, s *testservers.RawH2) {
				checkEq(t, "Complete+GoAway", m.Complete+m.Failures.GoAway, 500)
				checkEq(t, "Failed", m.Failed, m.Failures.GoAway)
				checkEq(t, "Complete", m.Complete, s.Streams())
				// 50 answered per connection, the rest of each one's
				// streams refused: 500 requests need more than 8.
				if m.Failures.GoAway == 0 || m.Connections < 9 {
					t.Errorf("GoAway %d, Connections %d: want some streams refused and a new connection after each GOAWAY", m.Failures.GoAway, m.Connections)
				}
				checkEq(t, "Connections", m.Connections, s.Conns())
				// The last connection's GOAWAY may follow the answer that
				// ended the run, and go unread.
				if got, sent := m.H2ErrorCodes["GOAWAY NO_ERROR"], s.GoAways(); got != sent && got != sent-1 {
					t.Errorf("GOAWAY NO_ERROR counted %d, server sent %d: want every one read but perhaps the last", got, sent)
				}
			}},
		{"no window update", func() *testservers.RawH2 { return &testservers.RawH2{NoWindowUpdate: true} },
			measure.Plan{Concurrency: 1, MaxStreams: 2, Requests: 4, Body: bytes.Repeat([]byte("p"), 100000), Timeout: 300 * time.Millisecond, ContinueOnError: true},
			func(t *testing.T, m *measure.Measurement, s *testservers.RawH2) {
				checkEq(t, "FlowControl", m.Failures.FlowControl, 4)
				checkEq(t, "Complete", m.Complete, 0)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.srv().Start(t)
			p := tc.plan
			p.URLs, p.HTTPVersion = []string{s.URL + "/"}, measure.HTTP2
			m := run(t, p)
			tc.check(t, m, s)
		})
	}
}

func TestRunH2RefusedWithoutALPN(t *testing.T) {
	// An HTTP/1.1-only TLS server: Go's refuses the handshake when ALPN
	// has no protocol in common (a server that ignores ALPN would give
	// none, counted as protocol), and the run stops saying so.
	ts := testservers.StartHTTP1TLS(t, h2Handler([]byte("one")))
	m := run(t, measure.Plan{URLs: []string{ts.URL + "/"}, HTTPVersion: measure.HTTP2, Requests: 10, TLS: measure.TLS{SkipVerify: true}})
	checkEq(t, "Complete", m.Complete, 0)
	if m.Failures.TLSHandshake+m.Failures.Protocol == 0 || !strings.Contains(m.Aborted, "application protocol") {
		t.Errorf("failures %+v, Aborted %q: want the run aborted on no ALPN h2", m.Failures, m.Aborted)
	}
}

func TestRunH2Validation(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan measure.Plan
		want string
	}{
		{"two hosts", measure.Plan{URLs: []string{"http://127.0.0.1:1/", "http://127.0.0.2:1/"}, HTTPVersion: measure.HTTP2, Requests: 1}, "urls[1]"},
		{"streams", measure.Plan{URLs: []string{"http://127.0.0.1:1/"}, HTTPVersion: measure.HTTP2, MaxStreams: 1001, Requests: 1}, "max_streams"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), tc.plan)
			if !errors.Is(err, measure.ErrInvalidPlan) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalidPlan naming %s", err, tc.want)
			}
		})
	}
}

// BenchmarkH2Memory runs 100k, 1M and 100k requests on loopback h2c and
// reports the heap in use after each: bodies are counted, never kept, so
// nothing grows from one run to the next. The server is the frame-layer one: net/http's HTTP/2 server
// answers about 12k requests per second on two shared cores, too slow for
// a million.
func BenchmarkH2Memory(b *testing.B) {
	ts := (&testservers.RawH2{Body: []byte("hello world")}).Start(b)
	for range b.N {
		for i, n := range []int{100_000, 1_000_000, 100_000} {
			label := []string{"100k", "1M", "100k-after-1M"}[i]
			start := time.Now()
			m, err := Run(context.Background(), measure.Plan{URLs: []string{ts.URL + "/"}, HTTPVersion: measure.HTTP2,
				Concurrency: 2, MaxStreams: 32, Requests: n, Duration: time.Minute})
			if err != nil || m.Complete != int64(n) {
				b.Fatalf("n %d: complete %d, err %v", n, m.Complete, err)
			}
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap-after-"+label)
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "req/s-"+label)
		}
	}
}

func TestRunH2VerifiesCertificates(t *testing.T) {
	// The run's TLS options hold on HTTP/2 too: a self-signed server is
	// refused unless verification is skipped.
	ts := testservers.StartH2TLS(t, h2Handler([]byte("ok")))
	for _, skip := range []bool{false, true} {
		m := run(t, measure.Plan{URLs: []string{ts.URL + "/"}, HTTPVersion: measure.HTTP2, Requests: 5, TLS: measure.TLS{SkipVerify: skip}})
		if skip {
			checkEq(t, "Complete with skip-verify", m.Complete, 5)
		} else if m.Complete != 0 || m.Failures.TLSHandshake == 0 {
			t.Errorf("without skip-verify: complete %d, tls_handshake %d; want the self-signed server refused", m.Complete, m.Failures.TLSHandshake)
		}
	}
}
