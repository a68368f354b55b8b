package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
)

// stubResolver answers every lookup with fixed addresses.
type stubResolver []netip.Addr

func (s stubResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return s, nil
}

// recordingDialer records what it was asked to dial and never opens a
// socket to a non-loopback address: it only dials through to loopback.
type recordingDialer struct {
	mu    sync.Mutex
	calls []string
}

func (r *recordingDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	r.mu.Lock()
	r.calls = append(r.calls, address)
	r.mu.Unlock()
	host, _, _ := net.SplitHostPort(address)
	if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
		return nil, errors.New("test dialer: refusing to dial non-loopback " + address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

func TestDialerRefusesBeforeConnecting(t *testing.T) {
	def, _ := New(nil)
	tests := []struct {
		name    string
		policy  *Policy
		addr    string
		resolve []netip.Addr
	}{
		{"literal private", def, "10.0.0.1:80", nil},
		{"literal metadata", def, "169.254.169.254:80", nil},
		{"literal mapped", def, "[::ffff:192.168.1.1]:80", nil},
		{"name to private", def, "rebind.test:80", []netip.Addr{netip.MustParseAddr("192.168.0.10")}},
		{"name to metadata", def, "meta.test:80", []netip.Addr{netip.MustParseAddr("169.254.169.254")}},
		{"name to public and private", def, "mixed.test:80", []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.1")}},
		{"name to loopback", def, "lo.test:80", []netip.Addr{netip.MustParseAddr("127.0.0.1")}},
		{"dev mode public", LoopbackOnly(), "pub.test:80", []netip.Addr{netip.MustParseAddr("93.184.216.34")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingDialer{}
			d := &Dialer{Policy: tt.policy, Resolver: stubResolver(tt.resolve), Dialer: rec}
			conn, err := d.DialContext(context.Background(), "tcp", tt.addr)
			if conn != nil {
				conn.Close()
			}
			if !errors.Is(err, ErrRefused) {
				t.Errorf("DialContext(%s) = %v, want ErrRefused", tt.addr, err)
			}
			if len(rec.calls) != 0 {
				t.Errorf("DialContext(%s) dialed %v before refusing, want no dial", tt.addr, rec.calls)
			}
		})
	}
}

func TestDialerConnectsToAdmittedLoopback(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	rec := &recordingDialer{}
	d := &Dialer{Policy: LoopbackOnly(), Resolver: stubResolver{netip.MustParseAddr("127.0.0.1")}, Dialer: rec}
	conn, err := d.Dial(context.Background(), "service.test:"+port)
	if err != nil {
		t.Fatalf("Dial = %v, want connected", err)
	}
	conn.Close()
	if want := "127.0.0.1:" + port; len(rec.calls) != 1 || rec.calls[0] != want {
		t.Errorf("dialed %v, want exactly [%s] (the checked IP, no second lookup)", rec.calls, want)
	}
}

func TestControlChecksKernelAddress(t *testing.T) {
	p := LoopbackOnly()
	if err := p.Control("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Errorf("Control(127.0.0.1) = %v, want nil", err)
	}
	if err := p.Control("tcp6", "[fe80::1]:80", nil); !errors.Is(err, ErrRefused) {
		t.Errorf("Control(fe80::1) = %v, want ErrRefused", err)
	}
}
