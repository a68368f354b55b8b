package loadgen

import (
	"context"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// sockDial opens a TCP connection to ap below net.Dialer. Without
// keep-alive a connection costs as much CPU as its request, and net.Dialer
// spends eight system calls and a trip through the poller on one (socket,
// bind, connect, a poller wait, getsockopt, getpeername, getsockname,
// TCP_NODELAY) plus its dial machinery; this spends three, all raw (see
// sockConn): a non-blocking socket and connect, and a second connect that
// reports the outcome. On loopback the handshake is done before the first
// connect returns, so the poller is entered, and ctx watched, only for a
// connect still in progress. It reports ok false, having done nothing, when
// ap needs the portable dialer (a zoned IPv6 address); a connection it
// returns has its deadline set already, which the first request keeps.
// shared says that a goroutine other than the caller may close the
// connection (crypto/tls does on a cancelled handshake): it is then
// attached to the poller at once, whose descriptor locking makes that safe.
func sockDial(ctx context.Context, ap netip.AddrPort, deadline time.Time, nodelay, shared bool) (conn net.Conn, ok bool, err error) {
	sa, ok := sockaddr(ap)
	if !ok {
		return nil, false, nil
	}
	fd, err := syscall.Socket(sa.family(), syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, true, dialError(ap, "socket", err)
	}
	c := &sockConn{fd: fd, remote: ap}
	c.deadline.Store(unixNano(deadline))
	if nodelay {
		// Nagle could hold the tail of a request larger than a segment, or a
		// TLS record written right after another, for a delayed ACK; a small
		// request written once on an idle connection never waits.
		one := int32(1)
		if _, _, errno := syscall.RawSyscall6(syscall.SYS_SETSOCKOPT, uintptr(fd), syscall.IPPROTO_TCP, syscall.TCP_NODELAY,
			uintptr(unsafe.Pointer(&one)), unsafe.Sizeof(one), 0); errno != 0 {
			_ = c.Close()
			return nil, true, dialError(ap, "setsockopt", errno)
		}
	}
	if err := sa.connect(fd); err != nil && err != syscall.EINPROGRESS {
		_ = c.Close()
		return nil, true, dialError(ap, "connect", err)
	}
	// Ask again before the poller is involved: on loopback the answer is
	// already in.
	cerr := sa.connect(fd)
	if connectPending(cerr) {
		cerr = c.awaitConnect(ctx, sa)
	}
	if connected(cerr) && shared {
		cerr = c.attach()
	}
	if !connected(cerr) {
		_ = c.Close()
		return nil, true, dialError(ap, "connect", cerr)
	}
	if ap.Addr().Unmap().IsLoopback() && sa.selfConnected(fd) {
		// Nothing listens there: the kernel gave the socket the target port
		// as its source and it connected to itself, as net.Dialer also checks.
		_ = c.Close()
		return nil, true, dialError(ap, "connect", syscall.ECONNREFUSED)
	}
	return c, true, nil
}

// selfConnected reports whether fd's local address is rs itself: a TCP
// simultaneous open with itself, possible when the target is an unused
// loopback port in the ephemeral range.
func (rs *rawSockaddr) selfConnected(fd int) bool {
	var local syscall.RawSockaddrInet6
	n := uint32(unsafe.Sizeof(local))
	_, _, errno := syscall.RawSyscall(syscall.SYS_GETSOCKNAME, uintptr(fd), uintptr(unsafe.Pointer(&local)), uintptr(unsafe.Pointer(&n)))
	if errno != 0 || uintptr(n) != rs.size {
		return false
	}
	a := unsafe.Slice((*byte)(unsafe.Pointer(&local)), rs.size)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&rs.sa)), rs.size)
	return string(a) == string(b)
}

// awaitConnect waits for a connect still in progress, for a slow or silent
// target: connect again each time the socket turns writable until the
// answer is in. A stop of the run interrupts the wait, as net.Dialer's
// context does. sa is a copy, so that only this rare path moves it to the
// heap.
func (c *sockConn) awaitConnect(ctx context.Context, sa rawSockaddr) error {
	if err := c.attach(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(aLongTimeAgo) })
	defer stop()
	var cerr error
	err := c.rc.Write(func(fd uintptr) bool {
		cerr = sa.connect(int(fd))
		return !connectPending(cerr)
	})
	if err != nil {
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

// rawSockaddr is a socket address as connect(2) takes it, built once per
// dial so that the raw connects need no conversion.
type rawSockaddr struct {
	sa   syscall.RawSockaddrInet6 // large enough for either family
	size uintptr
}

// sockaddr converts ap; ok false for a zoned IPv6 address, whose zone needs
// the interface table.
func sockaddr(ap netip.AddrPort) (rs rawSockaddr, ok bool) {
	ip := ap.Addr().Unmap()
	port := (*[2]byte)(unsafe.Pointer(&rs.sa.Port))
	port[0], port[1] = byte(ap.Port()>>8), byte(ap.Port()) // network byte order
	switch {
	case ip.Is4():
		// sockaddr_in has family and port where sockaddr_in6 has them, then
		// the address where sockaddr_in6 has its flow info.
		rs.sa.Family = syscall.AF_INET
		*(*[4]byte)(unsafe.Pointer(&rs.sa.Flowinfo)) = ip.As4()
		rs.size = syscall.SizeofSockaddrInet4
	case ip.Zone() == "":
		rs.sa.Family = syscall.AF_INET6
		rs.sa.Addr = ip.As16()
		rs.size = syscall.SizeofSockaddrInet6
	default:
		return rs, false
	}
	return rs, true
}

func (rs *rawSockaddr) family() int { return int(rs.sa.Family) }

// connect is connect(2), raw: on a non-blocking socket it never blocks.
func (rs *rawSockaddr) connect(fd int) error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&rs.sa)), rs.size)
	if errno != 0 {
		return errno
	}
	return nil
}

// dialError reports a failed dial as net.Dialer does, so messages and the
// errors.Is checks of failure classes stay the same.
func dialError(ap netip.AddrPort, call string, err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(call, errno)
	}
	return &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: err}
}
