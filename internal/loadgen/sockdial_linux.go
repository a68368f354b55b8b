package loadgen

import (
	"context"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// sockDial opens a TCP connection to ap below net.Dialer. Without
// keep-alive a connection costs as much CPU as its request, and net.Dialer
// spends eight system calls and a trip through the poller on one (socket,
// bind, connect, a poller wait, getsockopt, getpeername, getsockname,
// TCP_NODELAY) plus its dial machinery; this spends five, as ab does: a
// non-blocking socket and connect, the fcntl and epoll registration of
// os.NewFile, and a second connect that reports the outcome. On loopback the
// handshake is done before the first connect returns, so the poller is
// entered, and ctx watched, only for a connect still in progress. It reports
// ok false, having done nothing, when ap needs the portable dialer (a zoned
// IPv6 address); a connection it returns has its deadline set already, which
// the first request keeps.
func sockDial(ctx context.Context, ap netip.AddrPort, deadline time.Time, nodelay bool) (conn net.Conn, ok bool, err error) {
	sa, family := sockaddr(ap)
	if sa == nil {
		return nil, false, nil
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, true, dialError(ap, "socket", err)
	}
	if nodelay {
		// Nagle could hold the tail of a request larger than a segment, or a
		// TLS record written right after another, for a delayed ACK; a small
		// request written once on an idle connection never waits.
		if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1); err != nil {
			_ = syscall.Close(fd)
			return nil, true, dialError(ap, "setsockopt", err)
		}
	}
	if err := syscall.Connect(fd, sa); err != nil && err != syscall.EINPROGRESS {
		_ = syscall.Close(fd)
		return nil, true, dialError(ap, "connect", err)
	}
	// Ask again before the poller is involved: on loopback the answer is
	// already in.
	cerr := syscall.Connect(fd, sa)
	if !connectPending(cerr) && !connected(cerr) {
		_ = syscall.Close(fd)
		return nil, true, dialError(ap, "connect", cerr)
	}
	// From here the file owns fd: closing it deregisters fd from the poller.
	f := os.NewFile(uintptr(fd), "")
	c, err := newSockConn(f, ap)
	if err == nil {
		err = f.SetDeadline(deadline)
	}
	if err == nil && connectPending(cerr) {
		err = c.awaitConnect(ctx, sa)
	}
	if err != nil {
		_ = f.Close()
		return nil, true, dialError(ap, "connect", err)
	}
	return c, true, nil
}

// awaitConnect waits for a connect still in progress, for a slow or silent
// target: connect again each time the socket turns writable until the
// answer is in. A stop of the run interrupts the wait, as net.Dialer's
// context does.
func (c *sockConn) awaitConnect(ctx context.Context, sa syscall.Sockaddr) error {
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(aLongTimeAgo) })
	defer stop()
	var cerr error
	err := c.rc.Write(func(fd uintptr) bool {
		cerr = syscall.Connect(int(fd), sa)
		return !connectPending(cerr)
	})
	if err != nil || connected(cerr) {
		return err
	}
	return cerr
}

// connectPending reports whether connect says the handshake is under way.
func connectPending(err error) bool {
	return err == syscall.EALREADY || err == syscall.EINPROGRESS || err == syscall.EINTR
}

// connected reports whether connect says the handshake is done: nil from
// the call that saw it complete, EISCONN from any after.
func connected(err error) bool {
	return err == nil || err == syscall.EISCONN
}

// sockaddr converts ap for syscall.Connect; nil for a zoned IPv6 address,
// whose zone needs the interface table.
func sockaddr(ap netip.AddrPort) (syscall.Sockaddr, int) {
	ip := ap.Addr().Unmap()
	switch {
	case ip.Is4():
		return &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ip.As4()}, syscall.AF_INET
	case ip.Zone() == "":
		return &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}, syscall.AF_INET6
	default:
		return nil, 0
	}
}

// dialError reports a failed dial as net.Dialer does, so messages and the
// errors.Is checks of failure classes stay the same.
func dialError(ap netip.AddrPort, call string, err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(call, errno)
	}
	return &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: err}
}
