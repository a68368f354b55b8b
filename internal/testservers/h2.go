package testservers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// H2Server is a Go net/http server speaking HTTP/2 that counts what it
// serves: requests, connections and the most streams one connection had
// in flight at once.
type H2Server struct {
	URL string // https://127.0.0.1:PORT or http://127.0.0.1:PORT (h2c)

	requests  atomic.Int64
	conns     atomic.Int64
	read      atomic.Int64
	written   atomic.Int64
	mu        sync.Mutex
	maxActive int
	protos    map[string]int64
}

// Requests is how many requests the handler saw.
func (s *H2Server) Requests() int64 { return s.requests.Load() }

// Read and Written are the bytes the h2c server read and wrote on its
// connections (zero over TLS, where net/http owns the sockets).
func (s *H2Server) Read() int64    { return s.read.Load() }
func (s *H2Server) Written() int64 { return s.written.Load() }

// Conns is how many connections the server accepted.
func (s *H2Server) Conns() int64 { return s.conns.Load() }

// MaxActive is the most requests one connection had in flight at once.
func (s *H2Server) MaxActive() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxActive
}

// Protos counts requests per protocol ("HTTP/2.0", "HTTP/1.1").
func (s *H2Server) Protos() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int64, len(s.protos))
	for k, v := range s.protos {
		out[k] = v
	}
	return out
}

type connKey struct{}

// connState is one connection's requests in flight.
type connState struct{ active atomic.Int64 }

// StartH2TLS serves h over HTTP/2 with TLS (ALPN h2, HTTP/1.1 too) on a
// self-signed certificate, for t's lifetime.
func StartH2TLS(t testing.TB, h http.Handler) *H2Server {
	t.Helper()
	s := &H2Server{protos: map[string]int64{}}
	ts := httptest.NewUnstartedServer(s.wrap(h))
	ts.EnableHTTP2 = true
	ts.Config.ConnContext = s.connContext
	ts.StartTLS()
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// StartH2C serves h over HTTP/2 without TLS (h2c with prior knowledge;
// HTTP/1.1 too) for t's lifetime.
func StartH2C(t testing.TB, h http.Handler) *H2Server {
	t.Helper()
	s := &H2Server{protos: map[string]int64{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testservers: listen: %v", err)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: s.wrap(h), Protocols: &protocols, ConnContext: s.connContext,
		HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 1000}}
	go func() { _ = srv.Serve(&countingListener{Listener: ln, s: s}) }()
	t.Cleanup(func() { _ = srv.Close() })
	s.URL = "http://" + ln.Addr().String()
	return s
}

func (s *H2Server) connContext(ctx context.Context, _ net.Conn) context.Context {
	s.conns.Add(1)
	return context.WithValue(ctx, connKey{}, &connState{})
}

func (s *H2Server) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		cs, _ := r.Context().Value(connKey{}).(*connState)
		if cs != nil {
			n := int(cs.active.Add(1))
			defer cs.active.Add(-1)
			s.mu.Lock()
			s.maxActive = max(s.maxActive, n)
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.protos[r.Proto]++
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// RawH2 is an h2c server written on the frame layer, for what net/http
// never does on purpose: GOAWAY after a number of streams, RST_STREAM on
// every Nth, never a WINDOW_UPDATE. It answers every request 200 with Body.
type RawH2 struct {
	URL string

	// GoAwayAfter > 0: after that many streams on a connection, GOAWAY
	// (NO_ERROR) naming the last one answered, then close.
	GoAwayAfter int
	// ResetEvery > 0: every Nth stream (counted over the server) gets
	// RST_STREAM REFUSED_STREAM instead of an answer.
	ResetEvery int
	// NoWindowUpdate: request bodies are never acknowledged, so a body
	// past the initial 65535-byte window stalls; requests with a body get
	// no answer.
	NoWindowUpdate bool
	Body           []byte

	streams atomic.Int64
	resets  atomic.Int64
	goaways atomic.Int64
	conns   atomic.Int64
}

// Streams, Resets, GoAways and Conns count what the server saw and sent.
func (s *RawH2) Streams() int64 { return s.streams.Load() }
func (s *RawH2) Resets() int64  { return s.resets.Load() }
func (s *RawH2) GoAways() int64 { return s.goaways.Load() }
func (s *RawH2) Conns() int64   { return s.conns.Load() }

// Start listens on loopback and serves until t ends.
func (s *RawH2) Start(t testing.TB) *RawH2 {
	t.Helper()
	s.URL = "http://" + ServeTCP(t, func(c net.Conn, _ <-chan struct{}) {
		s.conns.Add(1)
		_ = s.serve(c)
	})
	return s
}

var errRawDone = errors.New("testservers: connection done")

func (s *RawH2) serve(c net.Conn) error {
	br := bufio.NewReader(c)
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(br, preface); err != nil || string(preface) != http2.ClientPreface {
		return errRawDone
	}
	bw := bufio.NewWriter(c)
	fr := http2.NewFramer(bw, br)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1000}); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	served := 0
	var last uint32
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.MetaHeadersFrame:
			if !f.StreamEnded() && s.NoWindowUpdate {
				continue // the body will stall: no answer, no window
			}
			if err := s.answer(fr, enc, &hbuf, f.StreamID); err != nil {
				return err
			}
			served++
			last = f.StreamID
		case *http2.DataFrame:
			if s.NoWindowUpdate {
				continue
			}
			if n := f.Length; n > 0 {
				_ = fr.WriteWindowUpdate(0, n)
			}
			if f.StreamEnded() {
				if err := s.answer(fr, enc, &hbuf, f.StreamID); err != nil {
					return err
				}
				served++
				last = f.StreamID
			}
		}
		if br.Buffered() == 0 {
			if s.GoAwayAfter > 0 && served >= s.GoAwayAfter {
				s.goaways.Add(1)
				_ = fr.WriteGoAway(last, http2.ErrCodeNo, nil)
				_ = bw.Flush()
				return errRawDone
			}
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
}

func (s *RawH2) answer(fr *http2.Framer, enc *hpack.Encoder, hbuf *bytes.Buffer, id uint32) error {
	n := s.streams.Add(1)
	if s.ResetEvery > 0 && n%int64(s.ResetEvery) == 0 {
		s.resets.Add(1)
		return fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
	}
	hbuf.Reset()
	_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	_ = enc.WriteField(hpack.HeaderField{Name: "server", Value: "rawh2"})
	_ = enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(s.Body))})
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true, EndStream: len(s.Body) == 0}); err != nil {
		return err
	}
	if len(s.Body) > 0 {
		return fr.WriteData(id, true, s.Body)
	}
	return nil
}

// countingListener counts the bytes of the connections it accepts.
type countingListener struct {
	net.Listener
	s *H2Server
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, s: l.s}, nil
}

type countingConn struct {
	net.Conn
	s *H2Server
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.s.read.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.s.written.Add(int64(n))
	return n, err
}

// StartHTTP1TLS serves h over HTTPS with HTTP/1.1 only (ALPN offers no
// h2), for t's lifetime.
func StartHTTP1TLS(t testing.TB, h http.Handler) *H2Server {
	t.Helper()
	s := &H2Server{protos: map[string]int64{}}
	ts := httptest.NewUnstartedServer(s.wrap(h))
	ts.Config.ConnContext = s.connContext
	ts.StartTLS()
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}
