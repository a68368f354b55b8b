package netguard

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
)

var _ measure.Guard = (*LoadGuard)(nil)

// TestLoadGuardRefusesEveryClass: what the engine asks before it dials
// (Resolve once per run, Admit before each connect) refuses every refused
// class, as a literal and as a name resolving to it.
func TestLoadGuardRefusesEveryClass(t *testing.T) {
	def, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range refusedAddresses {
		ip := netip.MustParseAddr(tt.ip)
		t.Run(tt.class+"/"+tt.ip, func(t *testing.T) {
			literal := &LoadGuard{Policy: def, Resolver: noLookup{t}}
			if _, err := literal.Resolve(t.Context(), net.JoinHostPort(tt.ip, "80")); !errors.Is(err, ErrRefused) {
				t.Errorf("Resolve(%s) = %v, want ErrRefused", tt.ip, err)
			}
			named := &LoadGuard{Policy: def, Resolver: stubResolver{ip}}
			if _, err := named.Resolve(t.Context(), "target.test:80"); !errors.Is(err, ErrRefused) {
				t.Errorf("Resolve(target.test -> %s) = %v, want ErrRefused", tt.ip, err)
			}
			if err := named.Admit("target.test:80", ip); !errors.Is(err, ErrRefused) {
				t.Errorf("Admit(target.test, %s) = %v, want ErrRefused", tt.ip, err)
			}
		})
	}
}

// countAccepts listens on a loopback port and counts connections: the
// address the policy under test refuses, so a leak would be seen.
func countAccepts(t *testing.T) (port string, accepted *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted = new(atomic.Int64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return port, accepted
}

// TestLoadGuardCatchesRebindingOnTheFastPath: a name admitted at
// submission (public answer) resolves to a refused address when the run
// starts. The engine's own dialer is used, as for every run, and the
// refused address (loopback, refused by the public-only policy; nothing
// else is ever dialed here) sees no connection.
func TestLoadGuardCatchesRebindingOnTheFastPath(t *testing.T) {
	def, _ := New(nil)
	port, accepted := countAccepts(t)
	r := &sequenceResolver{answers: [][]netip.Addr{
		{netip.MustParseAddr("93.184.216.34")},
		{netip.MustParseAddr("127.0.0.1")},
	}}
	url := "http://rebind.test:" + port + "/"
	if err := (&Checker{Policy: def, Resolver: r}).CheckURL(t.Context(), mustURL(t, url)); err != nil {
		t.Fatalf("CheckURL at submission = %v, want admitted", err)
	}
	_, err := loadgen.Run(t.Context(), measure.Plan{URLs: []string{url}, Requests: 10, Concurrency: 2,
		Guard: &LoadGuard{Policy: def, Resolver: r}})
	if !errors.Is(err, ErrRefused) || !errors.Is(err, measure.ErrUnreachable) {
		t.Errorf("Run after rebinding = %v, want ErrUnreachable and ErrRefused", err)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("the refused address got %d connections, want none", n)
	}
}

// TestLoadGuardPins: under pins a host is not looked up, its pins are
// what the run dials, and an address outside them is refused at connect.
func TestLoadGuardPins(t *testing.T) {
	dev := LoopbackOnly()
	port, accepted := countAccepts(t)
	pins := Pins{}
	pins.Add(HostPort("app.test", port), netip.MustParseAddr("127.0.0.1"))
	g := &LoadGuard{Policy: dev, Resolver: noLookup{t}, Pins: pins}
	ips, err := g.Resolve(t.Context(), "app.test:"+port)
	if err != nil || len(ips) != 1 || ips[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("Resolve under pins = %v, %v; want the pin", ips, err)
	}
	if err := g.Admit("app.test:"+port, netip.MustParseAddr("127.0.0.2")); !errors.Is(err, ErrNotPinned) {
		t.Errorf("Admit(unpinned 127.0.0.2) = %v, want ErrNotPinned", err)
	}
	if _, err := g.Resolve(t.Context(), "other.test:"+port); !errors.Is(err, ErrNotPinned) {
		t.Errorf("Resolve(unpinned host) = %v, want ErrNotPinned", err)
	}
	if _, err := g.Resolve(t.Context(), "127.0.0.2:"+port); !errors.Is(err, ErrNotPinned) {
		t.Errorf("Resolve(IP literal not pinned) = %v, want ErrNotPinned", err)
	}
	m, err := loadgen.Run(t.Context(), measure.Plan{URLs: []string{"http://app.test:" + port + "/"}, Requests: 3, Guard: g})
	if err != nil {
		t.Fatalf("Run under pins = %v", err)
	}
	if got := accepted.Load(); got == 0 || m.ServerHostname != "app.test" {
		t.Errorf("pinned run: %d connections to the pin, hostname %q", got, m.ServerHostname)
	}
}
