//go:build !linux

package loadgen

import (
	"context"
	"net"
	"net/netip"
	"time"
)

// sockDial is the Linux fast path of engine.dial; elsewhere every dial takes
// the portable net.Dialer.
func sockDial(context.Context, netip.AddrPort, time.Time, bool, bool) (net.Conn, bool, error) {
	return nil, false, nil
}
