package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

func TestDialerUnderPinsDialsOnlyPinnedAddresses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	a, b := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	glob, err := New([]string{"*.staging.test"})
	if err != nil {
		t.Fatal(err)
	}
	pins := Pins{}
	pins.Add(HostPort("App.Test.", port), a)
	pins.Add(HostPort("app.staging.test", port), a)
	pins.Add(HostPort("127.0.0.1", port), a)
	tests := []struct {
		name    string
		policy  *Policy
		addr    string
		wantErr error // nil: connected to a
	}{
		{"pinned name, resolver says b", LoopbackOnly(), "app.test:" + port, nil},
		{"pinned name under a glob", glob, "app.staging.test:" + port, nil},
		{"pinned literal", LoopbackOnly(), "127.0.0.1:" + port, nil},
		{"unpinned name", LoopbackOnly(), "other.test:" + port, ErrNotPinned},
		{"pinned name, other port", LoopbackOnly(), "app.test:1", ErrNotPinned},
		{"literal outside the pins", LoopbackOnly(), "127.0.0.2:" + port, ErrNotPinned},
		{"pins do not widen the policy", glob, "app.test:" + port, ErrRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recordingDialer{}
			res := &countingResolver{addr: b}
			d := &Dialer{Policy: tt.policy, Resolver: res, Dialer: rec}
			conn, err := d.DialContext(WithPins(context.Background(), pins), "tcp", tt.addr)
			if conn != nil {
				conn.Close()
			}
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("DialContext(%s) = %v, want %v", tt.addr, err, tt.wantErr)
			}
			if n := res.n.Load(); n != 0 {
				t.Errorf("resolver asked %d times under pins, want 0", n)
			}
			for _, c := range rec.calls {
				if c != net.JoinHostPort(a.String(), port) {
					t.Errorf("dialed %s, want only the pinned %s", c, a)
				}
			}
			if want := 0; tt.wantErr == nil {
				want = 1
				if len(rec.calls) != want {
					t.Errorf("dialed %v, want exactly the pinned address", rec.calls)
				}
			} else if len(rec.calls) != want {
				t.Errorf("dialed %v after refusing, want nothing", rec.calls)
			}
		})
	}
}

func TestDialerWithoutPinsStillResolves(t *testing.T) {
	res := &countingResolver{addr: netip.MustParseAddr("127.0.0.1")}
	rec := &recordingDialer{}
	d := &Dialer{Policy: LoopbackOnly(), Resolver: res, Dialer: rec}
	_, err := d.DialContext(context.Background(), "tcp", "app.test:1")
	if err == nil || res.n.Load() != 1 || len(rec.calls) != 1 || rec.calls[0] != "127.0.0.1:1" {
		t.Errorf("DialContext without pins: err %v, %d lookups, calls %v; want one lookup and a dial of 127.0.0.1:1",
			err, res.n.Load(), rec.calls)
	}
}
