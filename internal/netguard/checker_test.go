package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// No test in this file opens a socket: resolvers are stubs and the inner
// dialer hands back one end of a net.Pipe, so an address the policy
// wrongly admitted would still reach nothing.

// pipeDialer records every address it is asked to dial and "connects" to
// an in-memory pipe. refuseAll makes any call a test failure: it stands
// for the network in tests where the Dialer must refuse before connecting.
type pipeDialer struct {
	t         *testing.T
	refuseAll bool
	mu        sync.Mutex
	calls     []string
}

func (d *pipeDialer) DialContext(_ context.Context, _, address string) (net.Conn, error) {
	d.mu.Lock()
	d.calls = append(d.calls, address)
	d.mu.Unlock()
	if d.refuseAll {
		d.t.Errorf("inner dialer called with %s: the policy must refuse before connecting", address)
		return nil, errors.New("test dialer: must not be called")
	}
	client, server := net.Pipe()
	server.Close()
	return client, nil
}

func (d *pipeDialer) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.calls...)
}

// noLookup fails the test if a lookup happens: literals and allowlisted
// globs must be decided without DNS.
type noLookup struct{ t *testing.T }

func (r noLookup) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.t.Errorf("unexpected DNS lookup of %q", host)
	return nil, errors.New("test resolver: no lookups expected")
}

// sequenceResolver answers the n-th lookup with answers[n] (the last one
// repeats): the shape of a DNS rebinding attack.
type sequenceResolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	n       int
}

func (r *sequenceResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.n, len(r.answers)-1)]
	r.n++
	return a, nil
}

// blockingResolver never answers; only the context ends a lookup.
type blockingResolver struct{}

func (blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", raw, err)
	}
	return u
}

// literalURL is an http URL whose host is ip, bracketed when IPv6.
func literalURL(ip string) string {
	return "http://" + net.JoinHostPort(ip, "80") + "/"
}

// refusedAddresses lists one or more addresses of every class the default
// policy refuses, with the class named for failure messages.
var refusedAddresses = []struct{ class, ip string }{
	{"loopback", "127.0.0.1"},
	{"loopback", "127.255.0.9"},
	{"RFC 1918 10/8", "10.0.0.1"},
	{"RFC 1918 172.16/12", "172.16.0.1"},
	{"RFC 1918 172.16/12 top", "172.31.255.254"},
	{"RFC 1918 192.168/16", "192.168.1.1"},
	{"CGNAT 100.64/10", "100.64.0.1"},
	{"CGNAT 100.64/10 top", "100.127.255.254"},
	{"link-local", "169.254.0.1"},
	{"cloud metadata", "169.254.169.254"},
	{"multicast v4", "224.0.0.1"},
	{"multicast v4 SSDP", "239.255.255.250"},
	{"multicast v6", "ff02::1"},
	{"unspecified v4", "0.0.0.0"},
	{"unspecified v6", "::"},
	{"loopback v6", "::1"},
	{"ULA", "fd00::1"},
	{"ULA fc", "fc00::1"},
	{"link-local v6", "fe80::1"},
	{"mapped RFC 1918", "::ffff:10.0.0.1"},
	{"mapped metadata", "::ffff:169.254.169.254"},
	{"mapped loopback", "::ffff:127.0.0.1"},
	{"mapped RFC 1918, hex form", "::ffff:a00:1"},
	{"NAT64 of RFC 1918", "64:ff9b::a00:1"},
	{"NAT64 of public (the gateway is local)", "64:ff9b::808:808"},
	{"local-use NAT64", "64:ff9b:1::a00:1"},
	{"6to4 of RFC 1918", "2002:a00:1::1"},
	{"IPv4-compatible", "::a00:1"},
	{"IPv4-translated", "::ffff:0:a00:1"},
	{"broadcast", "255.255.255.255"},
}

// TestRefusedClassesAtSubmissionAndDial checks every refused class four
// ways: the literal in a URL and a name resolving to it, at submission
// (Checker) and at connect time (Dialer).
func TestRefusedClassesAtSubmissionAndDial(t *testing.T) {
	def, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range refusedAddresses {
		ip := netip.MustParseAddr(tt.ip)
		t.Run(tt.class+"/"+tt.ip, func(t *testing.T) {
			t.Run("submit literal", func(t *testing.T) {
				c := &Checker{Policy: def, Resolver: noLookup{t}}
				if err := c.CheckURL(t.Context(), mustURL(t, literalURL(tt.ip))); !errors.Is(err, ErrRefused) {
					t.Errorf("CheckURL(%s) = %v, want ErrRefused", literalURL(tt.ip), err)
				}
			})
			t.Run("submit resolved", func(t *testing.T) {
				c := &Checker{Policy: def, Resolver: stubResolver{ip}}
				err := c.CheckURL(t.Context(), mustURL(t, "http://target.test:8080/x"))
				if !errors.Is(err, ErrRefused) {
					t.Errorf("CheckURL(target.test -> %s) = %v, want ErrRefused", tt.ip, err)
				}
			})
			t.Run("dial literal", func(t *testing.T) {
				inner := &pipeDialer{t: t, refuseAll: true}
				d := &Dialer{Policy: def, Resolver: noLookup{t}, Dialer: inner}
				if _, err := d.DialContext(t.Context(), "tcp", net.JoinHostPort(tt.ip, "80")); !errors.Is(err, ErrRefused) {
					t.Errorf("DialContext(%s) = %v, want ErrRefused", tt.ip, err)
				}
			})
			t.Run("dial resolved", func(t *testing.T) {
				inner := &pipeDialer{t: t, refuseAll: true}
				d := &Dialer{Policy: def, Resolver: stubResolver{ip}, Dialer: inner}
				if _, err := d.Dial(t.Context(), "target.test:80"); !errors.Is(err, ErrRefused) {
					t.Errorf("Dial(target.test -> %s) = %v, want ErrRefused", tt.ip, err)
				}
			})
		})
	}
}

func TestCheckerErrorNamesTheAddress(t *testing.T) {
	c := &Checker{Policy: &Policy{}, Resolver: stubResolver{netip.MustParseAddr("169.254.169.254")}}
	err := c.CheckURL(t.Context(), mustURL(t, "http://metadata.test/latest"))
	for _, want := range []string{"metadata.test", "169.254.169.254", "link-local"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckURL error %q does not name %q", err, want)
		}
	}
}

func TestCheckerAdmitsPublicAddresses(t *testing.T) {
	def, _ := New(nil)
	for _, raw := range []string{"http://8.8.8.8/", "https://[2001:4860:4860::8888]:443/", "http://172.32.0.1/"} {
		c := &Checker{Policy: def, Resolver: noLookup{t}}
		if err := c.CheckURL(t.Context(), mustURL(t, raw)); err != nil {
			t.Errorf("CheckURL(%s) = %v, want admitted", raw, err)
		}
	}
	c := &Checker{Policy: def, Resolver: stubResolver{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("2606:2800:220:1::1")}}
	if err := c.CheckURL(t.Context(), mustURL(t, "https://www.example.test/")); err != nil {
		t.Errorf("CheckURL(name -> public v4+v6) = %v, want admitted", err)
	}
	mixed := &Checker{Policy: def, Resolver: stubResolver{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.1")}}
	if err := mixed.CheckURL(t.Context(), mustURL(t, "https://mixed.test/")); !errors.Is(err, ErrRefused) {
		t.Errorf("CheckURL(name -> public + private) = %v, want ErrRefused: one refused address refuses the name", err)
	}
}

func TestCheckerRefusesBadURLs(t *testing.T) {
	def, _ := New(nil)
	c := &Checker{Policy: def, Resolver: noLookup{t}}
	for _, raw := range []string{"file:///etc/passwd", "gopher://example.test/", "http:///nohost", "ftp://8.8.8.8/"} {
		if err := c.CheckURL(t.Context(), mustURL(t, raw)); !errors.Is(err, ErrRefused) {
			t.Errorf("CheckURL(%s) = %v, want ErrRefused", raw, err)
		}
	}
}

// TestRebindingIsCaughtAtDial: the name resolves to a public address when
// the job is submitted and to a private one when the worker connects.
func TestRebindingIsCaughtAtDial(t *testing.T) {
	def, _ := New(nil)
	r := &sequenceResolver{answers: [][]netip.Addr{
		{netip.MustParseAddr("93.184.216.34")},
		{netip.MustParseAddr("10.0.0.1")},
	}}
	c := &Checker{Policy: def, Resolver: r}
	if err := c.CheckURL(t.Context(), mustURL(t, "http://rebind.test/")); err != nil {
		t.Fatalf("CheckURL at submission = %v, want admitted (public answer)", err)
	}
	inner := &pipeDialer{t: t, refuseAll: true}
	d := &Dialer{Policy: def, Resolver: r, Dialer: inner}
	if _, err := d.Dial(t.Context(), "rebind.test:80"); !errors.Is(err, ErrRefused) {
		t.Errorf("Dial after rebinding = %v, want ErrRefused", err)
	}
}

func TestAllowlistAdmitsCIDRAndGlobAtSubmissionAndDial(t *testing.T) {
	p, err := New([]string{"10.20.0.0/16", "*.staging.example", "::ffff:192.168.7.0/120", "api.internal.example."})
	if err != nil {
		t.Fatal(err)
	}
	private := netip.MustParseAddr("10.99.0.1") // outside the CIDR: only a glob admits it
	tests := []struct {
		name    string
		url     string
		resolve []netip.Addr
		want    string // the address dialed; "" means refused
	}{
		{"CIDR literal", "http://10.20.3.4:8080/", nil, "10.20.3.4:8080"},
		{"CIDR mapped literal", "http://[::ffff:10.20.0.1]:8080/", nil, "[::ffff:10.20.0.1]:8080"},
		{"mapped CIDR entry", "http://192.168.7.9:8080/", nil, "192.168.7.9:8080"},
		{"CIDR by name", "http://db.test:8080/", []netip.Addr{netip.MustParseAddr("10.20.0.9")}, "10.20.0.9:8080"},
		{"glob", "http://api.staging.example:8080/", []netip.Addr{private}, "10.99.0.1:8080"},
		{"glob, case and trailing dot", "http://API.Staging.Example.:8080/", []netip.Addr{private}, "10.99.0.1:8080"},
		{"exact name written with a dot", "http://api.internal.example:8080/", []netip.Addr{private}, "10.99.0.1:8080"},
		{"outside CIDR", "http://10.21.0.1:8080/", nil, ""},
		{"glob does not match the apex", "http://staging.example:8080/", []netip.Addr{private}, ""},
		{"other private still refused", "http://192.168.8.1:8080/", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := mustURL(t, tt.url)
			var r Resolver = noLookup{t}
			if tt.resolve != nil {
				r = stubResolver(tt.resolve)
			}
			err := (&Checker{Policy: p, Resolver: r}).CheckURL(t.Context(), u)
			if (err == nil) != (tt.want != "") {
				t.Errorf("CheckURL(%s) = %v, want admitted %v", tt.url, err, tt.want != "")
			}
			inner := &pipeDialer{t: t, refuseAll: tt.want == ""}
			d := &Dialer{Policy: p, Resolver: r, Dialer: inner}
			conn, err := d.Dial(t.Context(), u.Host)
			if conn != nil {
				conn.Close()
			}
			if tt.want == "" {
				if !errors.Is(err, ErrRefused) {
					t.Errorf("Dial(%s) = %v, want ErrRefused", u.Host, err)
				}
				return
			}
			if got := inner.dialed(); err != nil || len(got) != 1 || got[0] != tt.want {
				t.Errorf("Dial(%s) = %v, dialed %v; want exactly [%s]", u.Host, err, got, tt.want)
			}
		})
	}
}

// TestDevModeAdmitsLoopbackOnly: the all-in-one policy admits 127.0.0.1
// and ::1 and nothing else, whether literal or behind a name.
func TestDevModeAdmitsLoopbackOnly(t *testing.T) {
	dev := LoopbackOnly()
	tests := []struct {
		url      string
		resolve  []netip.Addr
		admitted bool
	}{
		{"http://127.0.0.1:8081/", nil, true},
		{"http://[::1]:8081/", nil, true},
		{"http://local.test:8081/", []netip.Addr{netip.MustParseAddr("127.0.0.1")}, true},
		{"http://10.0.0.1:8081/", nil, false},
		{"http://8.8.8.8:8081/", nil, false},
		{"http://[2001:4860:4860::8888]:8081/", nil, false},
		{"http://example.test:8081/", []netip.Addr{netip.MustParseAddr("93.184.216.34")}, false},
		{"http://both.test:8081/", []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("93.184.216.34")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u := mustURL(t, tt.url)
			var r Resolver = noLookup{t}
			if tt.resolve != nil {
				r = stubResolver(tt.resolve)
			}
			err := (&Checker{Policy: dev, Resolver: r}).CheckURL(t.Context(), u)
			if tt.admitted != (err == nil) {
				t.Errorf("CheckURL(%s) = %v, want admitted %v", tt.url, err, tt.admitted)
			}
			inner := &pipeDialer{t: t, refuseAll: !tt.admitted}
			conn, err := (&Dialer{Policy: dev, Resolver: r, Dialer: inner}).Dial(t.Context(), u.Host)
			if conn != nil {
				conn.Close()
			}
			if tt.admitted != (err == nil) {
				t.Errorf("Dial(%s) = %v, want admitted %v", u.Host, err, tt.admitted)
			}
		})
	}
}

func TestNewLoopbackOnlyAddsAllowlist(t *testing.T) {
	p, err := NewLoopbackOnly([]string{"10.1.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	for ip, admitted := range map[string]bool{"127.0.0.1": true, "::1": true, "10.1.2.3": true, "10.2.0.1": false, "8.8.8.8": false} {
		if err := p.CheckIP(netip.MustParseAddr(ip)); admitted != (err == nil) {
			t.Errorf("CheckIP(%s) = %v, want admitted %v", ip, err, admitted)
		}
	}
	if _, err := NewLoopbackOnly([]string{"not a cidr"}); err == nil {
		t.Error("NewLoopbackOnly(bad entry) = nil error, want the entry refused")
	}
}

func TestCheckerLookupIsBounded(t *testing.T) {
	c := &Checker{Policy: &Policy{}, Resolver: blockingResolver{}, Timeout: 50 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- c.Check(mustURL(t, "http://slow.test/")) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Check(slow DNS) = %v, want a deadline error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Check(slow DNS) still waiting after 5s; the lookup timeout is not applied")
	}
}

// countingResolver answers with addr and counts lookups.
type countingResolver struct {
	addr netip.Addr
	n    atomic.Int64
}

func (r *countingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.n.Add(1)
	return []netip.Addr{r.addr}, nil
}

func TestSessionSharesOneBudgetAndResolvesEachHostOnce(t *testing.T) {
	slow := &Checker{Policy: &Policy{}, Resolver: blockingResolver{}, Timeout: 100 * time.Millisecond}
	check := slow.Session(t.Context())
	start := time.Now()
	for i := range 50 {
		if err := check(mustURL(t, fmt.Sprintf("http://slow%d.test/", i))); err == nil {
			t.Fatalf("check(slow%d.test) = nil, want a lookup error", i)
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("50 slow names took %s; want about one 100ms budget, not 50", took)
	}

	r := &countingResolver{addr: netip.MustParseAddr("93.184.216.34")}
	check = (&Checker{Policy: &Policy{}, Resolver: r}).Session(t.Context())
	for _, raw := range []string{"http://www.example.test/a", "http://www.example.test:8080/b", "http://WWW.example.test/c"} {
		if err := check(mustURL(t, raw)); err != nil {
			t.Errorf("check(%s) = %v, want admitted", raw, err)
		}
	}
	if n := r.n.Load(); n != 1 {
		t.Errorf("resolved %d times for one host, want once", n)
	}
}

// nxResolver answers every name as a DNS server does a mistyped one.
type nxResolver struct{}

func (nxResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: "192.0.2.53:53", IsNotFound: true}
}

// TestCheckerTellsAMistypedHostFromARefusal: a name that does not
// resolve is not refused by the policy; the client reads the host it
// gave, not the resolver's address or this package's name.
func TestCheckerTellsAMistypedHostFromARefusal(t *testing.T) {
	def, _ := New(nil)
	tests := []struct {
		name     string
		checker  *Checker
		url      string
		refused  bool
		message  string
		unwanted []string
	}{
		{"mistyped host", &Checker{Policy: def, Resolver: nxResolver{}}, "http://lcalhost:8080/", false,
			"cannot resolve host 'lcalhost': no such host; check its spelling", []string{"192.0.2.53", "netguard", "policy"}},
		{"mistyped host, loopback-only", &Checker{Policy: LoopbackOnly(), Resolver: nxResolver{}}, "http://lcalhost:8080/", false,
			"cannot resolve host 'lcalhost': no such host; check its spelling", []string{"192.0.2.53", "netguard", "policy"}},
		{"slow resolver", &Checker{Policy: def, Resolver: blockingResolver{}, Timeout: 20 * time.Millisecond}, "http://slow.test/", false,
			"cannot resolve host 'slow.test': the lookup timed out", []string{"netguard", "policy"}},
		{"empty answer", &Checker{Policy: def, Resolver: stubResolver{}}, "http://empty.test/", false,
			"cannot resolve host 'empty.test': it has no addresses", []string{"netguard"}},
		{"private literal", &Checker{Policy: def, Resolver: noLookup{t}}, "http://10.0.0.1/", true,
			"refused by the address policy: 10.0.0.1 is private (RFC 1918)", []string{"netguard"}},
		{"name to metadata", &Checker{Policy: def, Resolver: stubResolver{netip.MustParseAddr("169.254.169.254")}}, "http://meta.test/", true,
			"refused by the address policy: host 'meta.test' resolves to a refused address: 169.254.169.254 is link-local (cloud metadata)", []string{"netguard"}},
		{"scheme", &Checker{Policy: def, Resolver: noLookup{t}}, "ftp://example.test/", true,
			`refused by the address policy: scheme "ftp" (only http and https)`, []string{"netguard"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.checker.CheckURL(t.Context(), mustURL(t, tt.url))
			if got := errors.Is(err, ErrRefused); got != tt.refused {
				t.Errorf("CheckURL(%s) = %v: errors.Is(ErrRefused) = %v, want %v", tt.url, err, got, tt.refused)
			}
			if got := errors.Is(err, ErrUnresolved); got == tt.refused {
				t.Errorf("CheckURL(%s) = %v: errors.Is(ErrUnresolved) = %v, want %v", tt.url, err, got, !tt.refused)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("CheckURL(%s) = %v, want an *Error", tt.url, err)
			}
			if ce.Message != tt.message {
				t.Errorf("CheckURL(%s) message = %q, want %q", tt.url, ce.Message, tt.message)
			}
			for _, u := range tt.unwanted {
				if strings.Contains(ce.Message, u) {
					t.Errorf("CheckURL(%s) message %q contains %q", tt.url, ce.Message, u)
				}
			}
		})
	}
}
