package netguard

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// FuzzNew feeds the allowlist parser arbitrary entries. An entry it
// accepts must mean what it says: a CIDR or address admits its own
// address, and a glob without wildcards admits the host it spells.
func FuzzNew(f *testing.F) {
	for _, s := range []string{
		"10.0.0.0/8", "*.example.com", "::1", "", "[", "1.2.3.4/99", "::ffff:10.0.0.0/104",
		"fe80::1%eth0", "api.example.com.", "a b", "10.0.0.1", "2001:db8::/32", "*", "[a-z]*.test",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		p, err := New([]string{entry})
		if err != nil {
			if !strings.Contains(err.Error(), "allowlist entry") {
				t.Errorf("New(%q) error %q does not name the entry", entry, err)
			}
			return
		}
		e := strings.ToLower(strings.TrimSpace(entry))
		if pfx, err := netip.ParsePrefix(e); err == nil {
			// A mapped prefix shorter than /96 reaches beyond ::ffff:0:0/96;
			// CheckIP unmaps addresses, so its own first address is not in it.
			if !pfx.Addr().Is4In6() || pfx.Bits() >= 96 {
				if err := p.CheckIP(pfx.Masked().Addr()); err != nil {
					t.Errorf("New(%q).CheckIP(%s) = %v, want admitted", entry, pfx.Masked().Addr(), err)
				}
			}
			return
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			if err := p.CheckIP(ip); err != nil {
				t.Errorf("New(%q).CheckIP(%s) = %v, want admitted", entry, ip, err)
			}
			return
		}
		if e != "" && !strings.ContainsAny(e, `*?[\`) && !p.hostAllowed(e) {
			t.Errorf("New(%q) does not admit the host it spells", entry)
		}
		// Whatever it built must answer every check without panicking.
		_ = p.CheckIP(netip.MustParseAddr("127.0.0.1"))
		_ = p.CheckURL(&url.URL{Scheme: "http", Host: entry})
	})
}

// FuzzCheckURL feeds the submission check arbitrary strings as URLs, with
// every name resolving to a private address. Anything admitted must then
// be an http(s) URL whose host is a public IP literal, and the Dialer must
// decide the same host the same way, dialing exactly the checked address.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:8080/x", "http://[::ffff:a00:1]/", "https://8.8.8.8/", "http://example.com/",
		"http://[fe80::1%25eth0]:80/", "file:///etc/passwd", "http://0x7f000001/", "http://2130706433/",
		"http://[64:ff9b::a00:1]/", "http://169.254.169.254/latest/meta-data/", "HTTP://[2001:4860:4860::8888]:443",
		"http://user:pass@93.184.216.34:81/", "http://%31%30.0.0.1/", "http://[::]/", "//8.8.8.8/",
	} {
		f.Add(s)
	}
	def, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	private := stubResolver{netip.MustParseAddr("10.0.0.1")}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		cerr := (&Checker{Policy: def, Resolver: private}).CheckURL(t.Context(), u)
		if cerr != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("CheckURL(%q) admitted scheme %q", raw, u.Scheme)
		}
		ip, err := netip.ParseAddr(u.Hostname())
		if err != nil {
			t.Fatalf("CheckURL(%q) admitted host %q, a name resolving to 10.0.0.1", raw, u.Hostname())
		}
		for _, c := range refusedClasses {
			for _, n := range c.prefixes {
				if n.Contains(ip.Unmap()) {
					t.Fatalf("CheckURL(%q) admitted %s, which is %s", raw, ip, c.name)
				}
			}
		}
		inner := &pipeDialer{t: t}
		addr := net.JoinHostPort(u.Hostname(), "80")
		conn, err := (&Dialer{Policy: def, Resolver: private, Dialer: inner}).Dial(t.Context(), addr)
		if conn != nil {
			conn.Close()
		}
		want := net.JoinHostPort(ip.String(), "80")
		if got := inner.dialed(); err != nil || len(got) != 1 || got[0] != want {
			t.Fatalf("Dial(%s) = %v, dialed %v; want exactly [%s], as CheckURL admitted it", addr, err, got, want)
		}
	})
}
