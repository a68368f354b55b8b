package loadgen

import (
	"context"
	"errors"
	"github.com/benchq/benchq/internal/measure"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"
)

// stubGuard resolves every host to ips (the URL's own IP literal when
// empty) and admits what admit allows (everything when nil), counting
// both calls.
type stubGuard struct {
	ips      []netip.Addr
	resolveE error
	admit    func(ip netip.Addr) error
	resolves atomic.Int64
	admits   atomic.Int64
}

func (g *stubGuard) Resolve(ctx context.Context, addr string) ([]netip.Addr, error) {
	g.resolves.Add(1)
	if g.resolveE != nil {
		return nil, g.resolveE
	}
	if g.ips != nil {
		return g.ips, nil
	}
	return systemResolver{}.Resolve(ctx, addr)
}

func (g *stubGuard) Admit(_ string, ip netip.Addr) error {
	g.admits.Add(1)
	if g.admit != nil {
		return g.admit(ip)
	}
	return nil
}

var errPolicy = errors.New("refused by the test's policy")

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// TestGuardResolvesOncePerRun: a name is looked up once per run, not per
// connection, and every connection (no keep-alive: one per request) is
// admitted on the way to the raw-socket dialer.
func TestGuardResolvesOncePerRun(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }, nil)
	g := &stubGuard{ips: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}
	url := "http://app.test:" + portOf(t, ts.Addr) + "/"
	m := run(t, measure.Plan{URLs: []string{url}, Requests: 50, Concurrency: 5, Guard: g})
	checkEq(t, "Complete", m.Complete, 50)
	checkEq(t, "Failed", m.Failed, 0)
	checkEq(t, "ServerHostname", m.ServerHostname, "app.test")
	checkEq(t, "lookups", g.resolves.Load(), 1)
	checkEq(t, "admitted connects", g.admits.Load(), 50)
	checkEq(t, "server connections", settled(ts.Stats.conns.Load, 50), 50)
}

// TestGuardRefusalSendsNothing: whether the guard refuses the address at
// resolution (a name rebound to a refused address since submission) or at
// the connect itself, Run fails with ErrUnreachable and the server behind
// the refused address never sees a connection.
func TestGuardRefusalSendsNothing(t *testing.T) {
	cases := []struct {
		name  string
		guard *stubGuard
	}{
		{"at resolution", &stubGuard{resolveE: errPolicy}},
		{"at connect", &stubGuard{admit: func(netip.Addr) error { return errPolicy }}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }, nil)
			m, err := Run(t.Context(), measure.Plan{URLs: []string{ts.URL}, Requests: 20, Concurrency: 4, Guard: tc.guard})
			if !errors.Is(err, measure.ErrUnreachable) || !errors.Is(err, errPolicy) {
				t.Fatalf("Run error = %v, want measure.ErrUnreachable wrapping the policy's error", err)
			}
			if m != nil && m.Complete != 0 {
				t.Errorf("Complete = %d, want 0", m.Complete)
			}
			checkEq(t, "server connections", ts.Stats.conns.Load(), 0)
		})
	}
}

// TestRunMovesToNextAddress: a name whose first address refuses is served
// by its second, as ab moves on before any request succeeded.
func TestRunMovesToNextAddress(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }, nil)
	// Both addresses carry the URL's port: nothing listens on the first.
	g := &stubGuard{}
	g.ips = []netip.Addr{netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("127.0.0.1")}
	url := "http://two.test:" + portOf(t, ts.Addr) + "/"
	m := run(t, measure.Plan{URLs: []string{url}, Requests: 20, Concurrency: 2, Guard: g})
	checkEq(t, "Complete", m.Complete, 20)
	checkEq(t, "Failed", m.Failed, 0)
}

// TestRunLocalhost: without a guard a name goes to the system resolver
// (here the hosts file), and its address is dialed by the same fast path.
func TestRunLocalhost(t *testing.T) {
	ts := startServer(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") }, nil)
	m := run(t, measure.Plan{URLs: []string{"http://localhost:" + portOf(t, ts.Addr) + "/"}, Requests: 20, Concurrency: 2})
	checkEq(t, "Complete", m.Complete, 20)
	checkEq(t, "Failed", m.Failed, 0)
}
