package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"strings"
)

// ErrRefused is returned (wrapped, with the reason) for every address the
// policy does not admit. Callers test it with errors.Is.
var ErrRefused = errors.New("netguard: address refused")

// Error is a URL the policy refuses or a host that cannot be resolved.
// Message is written for the client: it names the host or the address
// and why, never this package or the resolver. Error() is that sentence
// too, since a refusal reaches people through error texts (a webhook's
// delivery log, a job's failure); errors.Is finds ErrRefused or
// ErrUnresolved in the chain.
type Error struct {
	Message string
	cause   error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.cause }

// Advise returns err with advice added to the message a client reads of
// it, keeping err in the chain.
func Advise(err error, advice string) error {
	var e *Error
	if !errors.As(err, &e) {
		return fmt.Errorf("%w%s", err, advice)
	}
	return &Error{Message: e.Message + advice, cause: err}
}

// refuse is a refusal: ErrRefused for callers to test, with a sentence
// for the client.
func refuse(format string, args ...any) error {
	return &Error{Message: refusedBy + fmt.Sprintf(format, args...), cause: ErrRefused}
}

// refusedBy begins the message of every refusal.
const refusedBy = "refused by the address policy: "

// allowlistable marks a refusal that an allowlist entry would lift, as
// opposed to one no configuration admits (a scheme, a zone).
type allowlistable struct{ error }

func (e allowlistable) Unwrap() error { return e.error }

// Allowlistable reports whether err is a refused address that an entry of
// the operator allowlist would admit, so a caller can say how to allow it.
func Allowlistable(err error) bool {
	var a allowlistable
	return errors.As(err, &a)
}

// class is a named range of addresses refused unless allowlisted.
type class struct {
	name     string
	prefixes []netip.Prefix
}

// refusedClasses are never a benchmark target by default: the machine
// itself, private networks and cloud metadata endpoints.
var refusedClasses = []class{
	{"unspecified", prefixes("0.0.0.0/8", "::/128")},
	{"loopback", prefixes("127.0.0.0/8", "::1/128")},
	{"private (RFC 1918)", prefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")},
	{"carrier-grade NAT (RFC 6598)", prefixes("100.64.0.0/10")},
	{"link-local (cloud metadata)", prefixes("169.254.0.0/16", "fe80::/10")},
	{"multicast", prefixes("224.0.0.0/4", "ff00::/8")},
	{"reserved", prefixes("240.0.0.0/4", "192.0.0.0/24", "198.18.0.0/15")},
	{"documentation", prefixes("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")},
	{"unique local (IPv6 ULA)", prefixes("fc00::/7")},
	// Forms that carry an IPv4 address inside IPv6: a gateway or the kernel
	// may deliver them to the embedded address, which would bypass the
	// IPv4 classes above (mapped ::ffff:0:0/96 is unmapped before checking).
	{"NAT64/6to4/Teredo wrapper", prefixes("64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32", "::ffff:0:0:0/96")},
	{"IPv4-compatible IPv6 (deprecated)", prefixes("::/96")},
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Policy admits or refuses addresses. The zero value refuses every class
// above and admits public addresses.
type Policy struct {
	allowNets  []netip.Prefix
	allowHosts []string // path.Match globs on lower-case host names
	onlyAllow  bool     // refuse everything not allowlisted, even public
}

// New builds a policy from an operator allowlist: CIDRs ("10.1.0.0/16")
// and host globs ("*.staging.example"). An entry that is neither is an
// error naming it.
func New(allow []string) (*Policy, error) {
	p := &Policy{}
	for _, raw := range allow {
		entry := strings.ToLower(strings.TrimSpace(raw))
		if entry == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(entry); err == nil {
			p.allowNets = append(p.allowNets, unmapPrefix(pfx.Masked()))
			continue
		}
		if ip, err := netip.ParseAddr(entry); err == nil {
			if ip.Zone() != "" {
				return nil, fmt.Errorf("netguard: allowlist entry %q has a zone; list the address without it", raw)
			}
			ip = ip.Unmap()
			p.allowNets = append(p.allowNets, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		if _, err := path.Match(entry, ""); err != nil || strings.ContainsAny(entry, "/ ") {
			return nil, fmt.Errorf("netguard: allowlist entry %q is neither a CIDR nor a host glob", raw)
		}
		// hostAllowed drops a host's trailing dot; so must the glob.
		p.allowHosts = append(p.allowHosts, strings.TrimSuffix(entry, "."))
	}
	return p, nil
}

// unmapPrefix turns an IPv4-mapped prefix (::ffff:10.0.0.0/104) into the
// IPv4 one (10.0.0.0/8): CheckIP unmaps addresses before matching, so a
// mapped prefix would otherwise never admit anything.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// LoopbackOnly is the all-in-one development policy: 127.0.0.0/8 and ::1
// and nothing else, public addresses included.
func LoopbackOnly() *Policy {
	return &Policy{allowNets: prefixes("127.0.0.0/8", "::1/128"), onlyAllow: true}
}

// NewLoopbackOnly is LoopbackOnly widened by an operator allowlist (as New
// reads it): the development mode of a machine that also benchmarks a
// staging host, still refusing every public address not listed.
func NewLoopbackOnly(allow []string) (*Policy, error) {
	p, err := New(allow)
	if err != nil {
		return nil, err
	}
	p.allowNets = append(p.allowNets, LoopbackOnly().allowNets...)
	p.onlyAllow = true
	return p, nil
}

// CheckIP admits or refuses one resolved address.
func (p *Policy) CheckIP(ip netip.Addr) error {
	ip = ip.Unmap() // ::ffff:10.0.0.1 is 10.0.0.1
	for _, n := range p.allowNets {
		if n.Contains(ip) {
			return nil
		}
	}
	if p.onlyAllow {
		return allowlistable{refuse("%s is not in the allowlist (only loopback is admitted in this mode)", ip)}
	}
	if ip.Zone() != "" {
		return refuse("%s has a zone", ip)
	}
	for _, c := range refusedClasses {
		for _, n := range c.prefixes {
			if n.Contains(ip) {
				return allowlistable{refuse("%s is %s", ip, c.name)}
			}
		}
	}
	return nil
}

// hostAllowed reports whether a host name matches an allowlist glob; such a
// host is admitted whatever it resolves to, as the operator asked.
func (p *Policy) hostAllowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, g := range p.allowHosts {
		if ok, _ := path.Match(g, host); ok {
			return true
		}
	}
	return false
}

// CheckURL checks what a URL shows without a DNS lookup: scheme, and the
// host when it is an IP literal or an allowlisted name. Checker.CheckURL
// is the submission-time check that also resolves names; the Dialer checks
// them again, resolved, at dial time.
func (p *Policy) CheckURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return refuse("scheme %q (only http and https)", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return refuse("the URL has no host")
	}
	if p.hostAllowed(host) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.CheckIP(ip)
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return p.CheckIP(netip.MustParseAddr("127.0.0.1"))
	}
	if p.onlyAllow {
		return refuse("host %q is not an allowlisted address (use 127.0.0.1 in this mode)", host)
	}
	return nil
}
