//go:build !linux

package loadgen

import (
	"net"
	"time"
)

// allowSpin does nothing where the engine has no socket of its own.
func allowSpin(net.Conn, *time.Duration) {}

// skipper is nil where the engine has no socket of its own: bodies are
// read through the buffer.
func (c *timedConn) skipper() skipper { return nil }
