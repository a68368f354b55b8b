package loadgen

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"github.com/benchq/benchq/internal/measure"
	"math/big"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// serverStats is what a test server saw on the wire, counted on its side
// of every connection.
type serverStats struct {
	conns    atomic.Int64 // connections accepted
	open     atomic.Int64
	maxOpen  atomic.Int64
	read     atomic.Int64 // bytes read by the server
	written  atomic.Int64 // bytes written by the server
	requests atomic.Int64
}

type countingListener struct {
	net.Listener
	st *serverStats
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.st.conns.Add(1)
	n := l.st.open.Add(1)
	for m := l.st.maxOpen.Load(); n > m && !l.st.maxOpen.CompareAndSwap(m, n); m = l.st.maxOpen.Load() {
	}
	return &countingConn{Conn: c, st: l.st}, nil
}

type countingConn struct {
	net.Conn
	st   *serverStats
	once sync.Once
}

func (c *countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.st.read.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.st.written.Add(int64(n))
	return n, err
}

func (c *countingConn) Close() error {
	c.once.Do(func() { c.st.open.Add(-1) })
	return c.Conn.Close()
}

// testServer is a real fasthttp server on 127.0.0.1:0.
type testServer struct {
	URL   string // http(s)://127.0.0.1:port
	Addr  string
	Stats *serverStats
}

// startServer serves h on loopback until the test ends; configure may
// adjust the server (keep-alive limits, TLS) before it starts.
func startServer(t testing.TB, h fasthttp.RequestHandler, configure func(*fasthttp.Server)) *testServer {
	t.Helper()
	st := &serverStats{}
	srv := &fasthttp.Server{
		Name: "benchq-test/1.0 (loopback)",
		Handler: func(ctx *fasthttp.RequestCtx) {
			st.requests.Add(1)
			h(ctx)
		},
	}
	if configure != nil {
		configure(srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ts := &testServer{URL: "http://" + ln.Addr().String(), Addr: ln.Addr().String(), Stats: st}
	cl := countingListener{Listener: ln, st: st}
	go func() { _ = srv.Serve(cl) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.ShutdownWithContext(ctx)
	})
	return ts
}

// startTLSServer serves h over TLS with a fresh self-signed certificate.
func startTLSServer(t testing.TB, h fasthttp.RequestHandler) *testServer {
	t.Helper()
	cert, key := selfSigned(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	st := &serverStats{}
	srv := &fasthttp.Server{Handler: h, Name: "benchq-tls"}
	go func() { _ = srv.ServeTLSEmbed(countingListener{Listener: ln, st: st}, cert, key) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return &testServer{URL: "https://" + ln.Addr().String(), Addr: ln.Addr().String(), Stats: st}
}

func selfSigned(t testing.TB) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("certificate: %v", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("marshal key: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func fixedBody(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// run runs p and fails the test on an engine error.
func run(t testing.TB, p measure.Plan) *measure.Measurement {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := Run(ctx, p)
	if err != nil {
		t.Fatalf("Run(%+v) error: %v", p, err)
	}
	return m
}
