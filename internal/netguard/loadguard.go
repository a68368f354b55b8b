package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
)

// LoadGuard is the Policy as the load engine applies it (it satisfies
// measure.Guard): a run resolves each target host once, every address is
// checked as the Dialer checks it, and each connect is admitted again
// against the same rules just before it is made. The engine then dials by
// itself, on the same raw-socket path as an unguarded run, so enforcing
// the policy costs a run no system call.
type LoadGuard struct {
	Policy   *Policy
	Resolver Resolver // zero means net.DefaultResolver
	// Pins, when set, confine every host:port to its pinned IPs: its name
	// is not looked up, and no other address is admitted (pin.go).
	Pins Pins
}

// Resolve returns the addresses a run may send load to for addr
// ("host:port"): its pins, or what the resolver answers, each admitted by
// the policy. Like the Dialer it refuses a name if any address is
// refused, since mixing a public and a private address is how rebinding
// hides.
func (g *LoadGuard) Resolve(ctx context.Context, addr string) ([]netip.Addr, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("netguard: resolve %q: %w", addr, err)
	}
	r := g.Resolver
	var pinned pinnedResolver
	if g.Pins != nil {
		if pinned = g.Pins[HostPort(host, port)]; len(pinned) == 0 {
			return nil, fmt.Errorf("%w: %s", ErrNotPinned, HostPort(host, port))
		}
		r = pinned
	}
	ips, err := g.Policy.admit(ctx, r, host)
	if err != nil {
		return nil, err
	}
	if pinned != nil {
		// An IP literal is not looked up: it must be a pin itself.
		ips = slices.DeleteFunc(slices.Clone(ips), func(ip netip.Addr) bool { return !slices.Contains(pinned, ip.Unmap()) })
		if len(ips) == 0 {
			return nil, fmt.Errorf("%w: %s", ErrNotPinned, HostPort(host, port))
		}
	}
	return ips, nil
}

// Admit checks the address a load connection to addr is about to reach.
// The engine only dials what Resolve returned, so this refuses nothing
// Resolve admitted; it is the last check before a packet leaves, and
// without pins it allocates nothing.
func (g *LoadGuard) Admit(addr string, ip netip.Addr) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("netguard: admit %q: %w", addr, err)
	}
	if g.Pins != nil && !g.Pins.Admits(HostPort(host, port), ip) {
		return fmt.Errorf("%w: %s at %s", ErrNotPinned, addr, ip)
	}
	if g.Policy.hostAllowed(host) {
		return nil
	}
	return g.Policy.CheckIP(ip)
}
