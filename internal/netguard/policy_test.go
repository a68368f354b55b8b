package netguard

import (
	"errors"
	"net/netip"
	"net/url"
	"testing"
)

// Addresses below are values the policy must refuse; no test dials them.
func TestDefaultPolicyRefusesEachClass(t *testing.T) {
	p, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ip      string
		refused bool
	}{
		{"127.0.0.1", true},
		{"127.255.0.9", true},
		{"::1", true},
		{"0.0.0.0", true},
		{"::", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.1.101", true},
		{"100.64.0.1", true},
		{"169.254.169.254", true},
		{"fe80::1", true},
		{"224.0.0.1", true},
		{"ff02::1", true},
		{"fd00::1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::a00:1", true},
		{"240.0.0.1", true},
		{"172.32.0.1", false},
		{"8.8.8.8", false},
		{"2001:4860:4860::8888", false},
	}
	for _, tt := range tests {
		err := p.CheckIP(netip.MustParseAddr(tt.ip))
		if got := errors.Is(err, ErrRefused); got != tt.refused {
			t.Errorf("CheckIP(%s) refused = %v, want %v (err %v)", tt.ip, got, tt.refused, err)
		}
	}
}

func TestLoopbackOnlyAdmitsLoopbackAndNothingElse(t *testing.T) {
	p := LoopbackOnly()
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"} {
		if err := p.CheckIP(netip.MustParseAddr(ip)); err != nil {
			t.Errorf("CheckIP(%s) = %v, want admitted", ip, err)
		}
	}
	for _, ip := range []string{"8.8.8.8", "10.0.0.1", "169.254.169.254", "0.0.0.0", "fe80::1"} {
		if err := p.CheckIP(netip.MustParseAddr(ip)); !errors.Is(err, ErrRefused) {
			t.Errorf("CheckIP(%s) = %v, want ErrRefused", ip, err)
		}
	}
}

func TestAllowlistAdmitsCIDRAndHostGlob(t *testing.T) {
	p, err := New([]string{"10.20.0.0/16", "*.staging.example", "192.168.7.7"})
	if err != nil {
		t.Fatal(err)
	}
	admitted := []string{"10.20.3.4", "192.168.7.7", "::ffff:10.20.0.1"}
	for _, ip := range admitted {
		if err := p.CheckIP(netip.MustParseAddr(ip)); err != nil {
			t.Errorf("CheckIP(%s) = %v, want admitted", ip, err)
		}
	}
	if err := p.CheckIP(netip.MustParseAddr("10.21.0.1")); !errors.Is(err, ErrRefused) {
		t.Errorf("CheckIP(10.21.0.1) = %v, want ErrRefused", err)
	}
	for _, raw := range []string{"http://api.staging.example/x", "https://API.Staging.Example./"} {
		u, _ := url.Parse(raw)
		if err := p.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%s) = %v, want admitted", raw, err)
		}
	}
}

func TestNewRejectsBadEntries(t *testing.T) {
	for _, entry := range []string{"10.0.0.0/33", "a b", "[x"} {
		if _, err := New([]string{entry}); err == nil {
			t.Errorf("New([%q]) = nil error, want error", entry)
		}
	}
}

func TestCheckURL(t *testing.T) {
	dev := LoopbackOnly()
	def, _ := New(nil)
	tests := []struct {
		policy  *Policy
		url     string
		refused bool
	}{
		{dev, "http://127.0.0.1:8080/x", false},
		{dev, "http://[::1]:8080/x", false},
		{dev, "http://localhost:8080/", false},
		{dev, "http://example.com/", true},
		{dev, "http://10.0.0.1/", true},
		{dev, "file:///etc/passwd", true},
		{dev, "gopher://127.0.0.1/", true},
		{def, "http://169.254.169.254/latest/meta-data/", true},
		{def, "http://[::ffff:192.168.0.1]/", true},
		{def, "http://localhost/", true},
		{def, "https://example.com/", false},
		{def, "http:///nohost", true},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatalf("parse %q: %v", tt.url, err)
		}
		err = tt.policy.CheckURL(u)
		if got := errors.Is(err, ErrRefused); got != tt.refused {
			t.Errorf("CheckURL(%s) refused = %v, want %v (err %v)", tt.url, got, tt.refused, err)
		}
	}
}
