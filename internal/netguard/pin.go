package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// ErrNotPinned is wrapped by Dialer.DialContext when the context carries
// Pins and the address dialed has none: under pins, nothing else is
// dialed.
var ErrNotPinned = errors.New("netguard: address not among the verified ones")

// Pins maps "host:port" (HostPort) to the only IPs a connection to it may
// go to. Target verification proves that the holder of an API key
// controls the IP that served its token, not the name: were the name
// looked up again for the load, whoever controls its DNS could serve the
// token from their own IP and then point the name at someone else's.
type Pins map[string][]netip.Addr

// Add pins hostPort to ip as well.
func (p Pins) Add(hostPort string, ip netip.Addr) {
	ip = ip.Unmap()
	if !slices.Contains(p[hostPort], ip) {
		p[hostPort] = append(p[hostPort], ip)
	}
}

// Admits reports whether a connection to hostPort may go to ip.
func (p Pins) Admits(hostPort string, ip netip.Addr) bool {
	return slices.Contains(p[hostPort], ip.Unmap())
}

// HostPort is the key of Pins for host and port: lower-case host without
// a trailing dot, then the port ("example.com:443", "[::1]:80").
func HostPort(host, port string) string {
	return net.JoinHostPort(strings.TrimSuffix(strings.ToLower(host), "."), port)
}

// URLHostPort is HostPort for the address a URL sends its requests to: the
// port the scheme's default (80 for http, 443 for https) when the URL has
// none. It is how every part of benchq names a target's host (pins,
// verified hosts, the hosts an exclusive job holds), so that they agree.
func URLHostPort(u *url.URL) (string, error) {
	host := u.Hostname()
	if host == "" {
		return "", fmt.Errorf("netguard: %q has no host", u.Redacted())
	}
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		default:
			return "", fmt.Errorf("netguard: scheme %q is not http or https", u.Scheme)
		}
	}
	return HostPort(host, port), nil
}

type pinsKey struct{}

// WithPins returns a context under which Dialer.DialContext dials a
// pinned host:port only at its pinned IPs, without asking the resolver,
// and refuses any other address with ErrNotPinned. The policy still
// applies to the pinned IPs as if the resolver had returned them, so a
// name an allowlist glob admits keeps working. A context carries the pins
// through the load engine, which dials by a plain function.
func WithPins(ctx context.Context, pins Pins) context.Context {
	return context.WithValue(ctx, pinsKey{}, pins)
}

// PinsFrom returns the pins of ctx, if it has any.
func PinsFrom(ctx context.Context) (Pins, bool) {
	p, ok := ctx.Value(pinsKey{}).(Pins)
	return p, ok
}

// pinnedResolver answers a pinned host's lookup with its pins.
type pinnedResolver []netip.Addr

func (r pinnedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r, nil
}

// pinnedAddrs is the lookup of host:port under ctx's pins: ok is false
// when ctx has none; otherwise the pinned resolver, or ErrNotPinned.
func pinnedAddrs(ctx context.Context, host, port string) (r pinnedResolver, ok bool, err error) {
	pins, ok := PinsFrom(ctx)
	if !ok {
		return nil, false, nil
	}
	key := HostPort(host, port)
	ips := pins[key]
	if len(ips) == 0 {
		return nil, true, fmt.Errorf("%w: %s", ErrNotPinned, key)
	}
	return pinnedResolver(ips), true, nil
}
