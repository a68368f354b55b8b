package loadgen

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"fmt"
	"github.com/benchq/benchq/internal/measure"
	"net"
	"net/netip"
	"strings"
	"time"
)

// timedConn wraps a worker's connection to see what fasthttp has no hook
// for: when the first byte of a response arrives (ab's "Waiting" ends), how
// many bytes were read, and the raw error of a failed read, which fasthttp
// turns into io.EOF or ErrTimeout when it happens on the first byte.
// One timedConn lives in each worker and is reused for every connection.
type timedConn struct {
	net.Conn
	armed     bool
	firstRead time.Time
	read      int64 // bytes read since arm
	total     int64 // bytes read on every connection of the worker
	err       error // raw error of the last failed read since arm
	// sink is the engine's buffer of skipped bytes, which nothing reads
	// (sockconn_linux.go).
	sink []byte
}

// arm starts watching for the first byte of the next response.
func (c *timedConn) arm() {
	c.armed = true
	c.read = 0
	c.err = nil
}

func (c *timedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.count(n, err)
	return n, err
}

// count notes what a read or a skip got.
func (c *timedConn) count(n int, err error) {
	if n > 0 {
		if c.armed {
			c.firstRead = time.Now()
			c.armed = false
		}
		c.read += int64(n)
		c.total += int64(n)
	}
	if err != nil {
		c.err = err
	}
}

// nodelayAbove is the request size above which a fast-path dial sets
// TCP_NODELAY: a request that fits one segment of any network is written
// whole on an idle connection, where Nagle's algorithm never waits.
const nodelayAbove = 1400

// errRefusedByGuard marks a dial the plan's Guard refused.
type errRefusedByGuard struct{ err error }

func (e *errRefusedByGuard) Error() string { return e.err.Error() }
func (e *errRefusedByGuard) Unwrap() error { return e.err }

// dial connects to t's current address, once the Guard admits it, and
// finishes any TLS handshake by deadline; ctx is cancelled when the run
// stops. armed reports that the connection's deadline is already set to
// deadline. Every run, guarded or not, dials the same way: on Linux below
// net.Dialer (sockDial), which only a zoned IPv6 address needs. hs is the
// handshake's duration, from the TCP connection to its end (0 without TLS).
func (e *engine) dial(ctx context.Context, t *target, deadline time.Time) (conn net.Conn, armed bool, hs time.Duration, err error) {
	ap, i := t.current()
	if err := e.guard.Admit(t.addr, ap.Addr()); err != nil {
		return nil, false, 0, &errRefusedByGuard{fmt.Errorf("%w: %s at %s: %w", measure.ErrUnreachable, t.addr, ap, err)}
	}
	conn, armed, err = sockDial(ctx, ap, deadline, t.tls != nil || len(t.req) > nodelayAbove, t.tls != nil)
	if !armed && err == nil {
		// KeepAlive -1: no TCP keep-alive probes; they would cost four
		// setsockopt calls per connection and a request never idles that long.
		nd := net.Dialer{Deadline: deadline, KeepAlive: -1}
		// No resolution and no parallel dial machinery: a third less CPU per
		// connection than DialContext.
		conn, err = dialTCP(ctx, &nd, ap)
	}
	if err != nil {
		if t.moveOn(i, err, e.docLen.Load() >= 0) {
			return e.dial(ctx, t, deadline)
		}
		return nil, false, 0, err
	}
	if t.tls == nil {
		return conn, armed, 0, nil
	}
	begin := time.Now()
	tc := tls.Client(conn, t.tls)
	hctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = conn.Close()
		return nil, false, 0, newHandshakeError(err)
	}
	return tc, armed, time.Since(begin), nil
}

// tlsProtocol describes a handshake as ab's "SSL/TLS Protocol" line does:
// protocol, cipher, server key bits, cipher secret bits. The cipher is Go's
// (IANA) name, not OpenSSL's.
func tlsProtocol(conn net.Conn) string {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return ""
	}
	st := tc.ConnectionState()
	proto := strings.Replace(tls.VersionName(st.Version), "TLS ", "TLSv", 1)
	cipher := tls.CipherSuiteName(st.CipherSuite)
	pk := 0
	if len(st.PeerCertificates) > 0 {
		switch k := st.PeerCertificates[0].PublicKey.(type) {
		case *rsa.PublicKey:
			pk = k.N.BitLen()
		case *ecdsa.PublicKey:
			pk = k.Curve.Params().BitSize
		case ed25519.PublicKey:
			pk = 256
		}
	}
	return fmt.Sprintf("%s,%s,%d,%d", proto, cipher, pk, secretBits(cipher))
}

func secretBits(cipher string) int {
	switch {
	case strings.Contains(cipher, "AES_128"):
		return 128
	case strings.Contains(cipher, "AES_256"), strings.Contains(cipher, "CHACHA20"):
		return 256
	default:
		return 0
	}
}

// dialTCP avoids returning a typed nil *net.TCPConn as a non-nil net.Conn.
func dialTCP(ctx context.Context, nd *net.Dialer, ap netip.AddrPort) (net.Conn, error) {
	c, err := nd.DialTCP(ctx, "tcp", netip.AddrPort{}, ap)
	if err != nil {
		return nil, err
	}
	return c, nil
}
