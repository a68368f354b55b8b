package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
)

// Resolver looks up a host's addresses; *net.Resolver satisfies it, and
// tests stub it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ContextDialer opens a connection to an already checked IP address.
type ContextDialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Dialer enforces a Policy at connect time. It resolves a name once, refuses
// it if any of its addresses is refused (a name pointing at both a public
// and a private address is how rebinding hides), and dials the checked IP.
// Under WithPins it dials pinned addresses only (pin.go).
type Dialer struct {
	Policy   *Policy
	Resolver Resolver      // zero means net.DefaultResolver
	Dialer   ContextDialer // zero means a plain *net.Dialer
}

// DialContext has the signature of net.Dialer.DialContext, for net/http's
// Transport; Dial adapts it to loadgen's DialFunc.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("netguard: dial %q: %w", address, err)
	}
	var resolver Resolver = d.Resolver
	pinned, hasPins, err := pinnedAddrs(ctx, host, port) // pin.go
	if err != nil {
		return nil, err
	}
	if hasPins {
		resolver = pinned
	}
	ips, err := d.Policy.admit(ctx, resolver, host)
	if err != nil {
		return nil, err
	}
	if hasPins {
		// An IP literal is not looked up: it must be a pin itself.
		ips = slices.DeleteFunc(ips, func(ip netip.Addr) bool { return !slices.Contains(pinned, ip.Unmap()) })
		if len(ips) == 0 {
			return nil, fmt.Errorf("%w: %s", ErrNotPinned, HostPort(host, port))
		}
	}
	inner := d.Dialer
	if inner == nil {
		inner = &net.Dialer{}
	}
	var lastErr error
	for _, ip := range ips {
		conn, err := inner.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// Dial is DialContext on TCP, the shape loadgen.Plan.Dial takes.
func (d *Dialer) Dial(ctx context.Context, address string) (net.Conn, error) {
	return d.DialContext(ctx, "tcp", address)
}

// admit resolves host (an IP literal resolves to itself) and checks every
// address it has. A name an allowlist glob admits keeps all its addresses,
// as the operator asked. Both the submission check and the Dialer go
// through here, so they cannot disagree on a host.
func (p *Policy) admit(ctx context.Context, r Resolver, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := p.CheckIP(ip); err != nil {
			return nil, err
		}
		return []netip.Addr{ip}, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err == nil && len(ips) == 0 {
		err = errNoAddresses
	}
	if err != nil {
		return nil, unresolved(host, err)
	}
	if p.hostAllowed(host) {
		return ips, nil
	}
	for _, ip := range ips {
		if err := p.CheckIP(ip); err != nil {
			return nil, resolvesToRefused(host, err)
		}
	}
	return ips, nil
}

// ErrUnresolved is wrapped by the error of a host name that does not
// resolve: most often a mistyped name, which is not a refusal (it wraps
// no ErrRefused), and the client reads it as such.
var ErrUnresolved = errors.New("netguard: cannot resolve host")

// errNoAddresses is a lookup that succeeded with nothing in it.
var errNoAddresses = errors.New("no addresses")

// unresolved is the error of a failed lookup of host: the client reads
// the name it gave and why, never the resolver's address or Go's text.
func unresolved(host string, err error) error {
	msg := fmt.Sprintf("cannot resolve host '%s'", host)
	var de *net.DNSError
	switch {
	case errors.As(err, &de) && de.IsNotFound:
		msg += ": no such host; check its spelling"
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &de) && de.IsTimeout:
		msg += ": the lookup timed out"
	case errors.Is(err, errNoAddresses):
		msg += ": it has no addresses"
	}
	return &Error{Message: msg, cause: fmt.Errorf("%w %q: %w", ErrUnresolved, host, err)}
}

// resolvesToRefused is the refusal of host for one of its addresses,
// refusal (from CheckIP), kept in the chain so that errors.Is(ErrRefused)
// and Allowlistable still see it.
func resolvesToRefused(host string, refusal error) error {
	reason := refusal.Error()
	var e *Error
	if errors.As(refusal, &e) {
		reason = strings.TrimPrefix(e.Message, refusedBy)
	}
	return &Error{Message: fmt.Sprintf(refusedBy+"host '%s' resolves to a refused address: %s", host, reason), cause: refusal}
}

// Control is a net.Dialer.Control hook for clients that dial by themselves
// (net/http with its own resolver): it checks the address the kernel is
// about to connect to, the last point before a packet leaves. It sees an
// IP only, so a host glob cannot admit anything here: do not put it under
// a Dialer, which already dials only what it checked by name.
func (p *Policy) Control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("netguard: control %q: %w", address, err)
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return fmt.Errorf("netguard: control %q: not an IP: %w", address, err)
	}
	return p.CheckIP(ip)
}
