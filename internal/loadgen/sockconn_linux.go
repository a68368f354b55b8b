package loadgen

import (
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"unsafe"
)

// sockConn is a connection opened by sockDial. An *os.File on a
// non-blocking socket already waits, closes and keeps deadlines through the
// runtime poller as a net.Conn does; sockConn adds the addresses and its own
// Read and Write.
//
// Read and Write issue their system calls raw, without telling the
// scheduler: on a non-blocking socket they never block, and a call the
// scheduler sees is one the system monitor may find still running after
// 20µs, hand the worker's P to another thread and wake that thread, which a
// loopback write often lasts. Raw calls keep the hot path on one thread:
// about a tenth less CPU per kept-alive request, and the monitor sleeps.
type sockConn struct {
	*os.File
	remote netip.AddrPort
	rc     syscall.RawConn

	// The poller calls readFn and writeFn, built once per connection so a
	// request allocates nothing; buf, n and err carry their operands.
	readFn, writeFn func(fd uintptr) bool
	buf             []byte
	n               int
	err             error
}

func newSockConn(f *os.File, remote netip.AddrPort) (*sockConn, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	c := &sockConn{File: f, remote: remote, rc: rc}
	c.readFn, c.writeFn = c.rawRead, c.rawWrite
	return c, nil
}

// Read reads as net.Conn does: io.EOF at the peer's close.
func (c *sockConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.buf, c.n, c.err = b, 0, nil
	if err := c.rc.Read(c.readFn); err != nil {
		return 0, err // deadline or closed
	}
	switch {
	case c.err != nil:
		return 0, c.err
	case c.n == 0:
		return 0, io.EOF
	}
	return c.n, nil
}

// rawRead is one read attempt; false sends the poller waiting for data.
func (c *sockConn) rawRead(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
		switch errno {
		case 0:
			c.n = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.err = os.NewSyscallError("read", errno)
		return true
	}
}

// Write writes all of b unless an error stops it.
func (c *sockConn) Write(b []byte) (int, error) {
	c.buf, c.n, c.err = b, 0, nil
	if err := c.rc.Write(c.writeFn); err != nil {
		return c.n, err
	}
	return c.n, c.err
}

// rawWrite writes what the socket takes of buf; false sends the poller
// waiting for room.
func (c *sockConn) rawWrite(fd uintptr) bool {
	for len(c.buf) > 0 {
		n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
		switch errno {
		case 0:
			c.n += int(n)
			c.buf = c.buf[n:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			c.err = os.NewSyscallError("write", errno)
			return true
		}
	}
	return true
}

// LocalAddr returns the connection's local address, asked of the kernel
// only now so that the dial does not pay for it; nil once closed.
func (c *sockConn) LocalAddr() net.Addr {
	var sa syscall.Sockaddr
	if c.rc.Control(func(fd uintptr) { sa, _ = syscall.Getsockname(int(fd)) }) != nil {
		return nil
	}
	switch sa := sa.(type) {
	case *syscall.SockaddrInet4:
		return &net.TCPAddr{IP: sa.Addr[:], Port: sa.Port}
	case *syscall.SockaddrInet6:
		return &net.TCPAddr{IP: sa.Addr[:], Port: sa.Port}
	}
	return nil
}

// RemoteAddr returns the address the connection was dialled to.
func (c *sockConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.remote) }
