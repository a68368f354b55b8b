//go:build !linux

package loadgen

import (
	"net"
	"time"
)

// allowSpin does nothing where the engine has no socket of its own.
func allowSpin(net.Conn, *time.Duration) {}
