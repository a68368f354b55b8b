package loadgen

import (
	"context"
	"errors"
	"fmt"
	"github.com/benchq/benchq/internal/measure"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
)

// systemResolver resolves names when a plan has no Guard.
type systemResolver struct{}

func (systemResolver) Resolve(ctx context.Context, addr string) ([]netip.Addr, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

func (systemResolver) Admit(string, netip.Addr) error { return nil }

// resolve looks every target's host up once, before the run's clock
// starts: ab resolves its host once too, and a lookup per connection costs
// a quarter of the CPU a connection without keep-alive needs. An error
// wraps ErrUnreachable.
func (e *engine) resolve(ctx context.Context) error {
	g := e.guard
	for i := range e.targets {
		t := &e.targets[i]
		ips, err := g.Resolve(ctx, t.addr)
		if err == nil && len(ips) == 0 {
			err = errors.New("no addresses")
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %w", measure.ErrUnreachable, t.addr, err)
		}
		t.addrs = make([]netip.AddrPort, len(ips))
		for j, ip := range ips {
			t.addrs[j] = netip.AddrPortFrom(ip, uint16(t.port))
		}
		t.cur = new(atomic.Int32)
	}
	return nil
}

// current returns the address connections to t go to now.
func (t *target) current() (netip.AddrPort, int32) {
	i := t.cur.Load()
	return t.addrs[i], i
}

// moveOn is called when a connect to addrs[i] was refused: the next
// address is tried, as ab tries the next one its resolver returned, while
// no request has succeeded yet (succeeded false). A worker whose connect
// to addrs[i] was refused after another worker had already moved on
// retries at the current address, whether or not a request has succeeded
// there since. It reports whether to dial again.
func (t *target) moveOn(i int32, err error, succeeded bool) bool {
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return false
	}
	if t.cur.Load() != i {
		return true
	}
	if succeeded || int(i)+1 >= len(t.addrs) {
		return false
	}
	t.cur.CompareAndSwap(i, i+1)
	return true
}
