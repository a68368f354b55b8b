package loadgen

import (
	"net"
	"runtime"
	"time"
)

// Bounds of a read's spin: at most spinTries attempts within spinFor.
const (
	spinTries = 20
	spinFor   = 50 * time.Microsecond
)

// spin retries a read that found no data a few times, yielding between
// tries, before the read waits in the poller; it reports whether data (or
// the peer's close) arrived meanwhile. A run spins only when each worker
// has a core of its own (Concurrency <= the client's cores): then the
// core would otherwise sit idle, and waking from the poller costs a
// context switch and a wake-up that ab, blocked in epoll_wait on a single
// thread, pays once per request where the engine paid twice or more.
// Measured at c = 1 without keep-alive on lighttpd: 7.4k req/s parked, 12.5k
// spinning, ab 9.4k. With more workers than cores the other workers use
// the core, and spinning would only take it from them.
func (c *sockConn) spin() bool {
	start := time.Now()
	deadline := start.Add(spinFor)
	defer func() { *c.spun += time.Since(start) }()
	for range spinTries {
		runtime.Gosched()
		if c.try(false) {
			return true
		}
		if time.Now().After(deadline) {
			break
		}
	}
	return false
}

// allowSpin lets conn's reads spin, adding their time to spun, when the
// connection is the engine's own socket.
func allowSpin(conn net.Conn, spun *time.Duration) {
	if sc, ok := conn.(*sockConn); ok {
		sc.spun = spun
	}
}
