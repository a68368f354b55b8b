package loadgen

import (
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// sockConn is a connection opened by sockDial on a non-blocking socket.
//
// Its system calls are raw, without telling the scheduler: on a
// non-blocking socket they never block, and a call the scheduler sees is one
// the system monitor may find still running after 20µs, hand the worker's P
// to another thread and wake that thread, which a loopback write or close
// often lasts. Raw calls keep the hot path on one thread.
//
// The socket joins the runtime poller only when a call would block (attach):
// an *os.File then waits, keeps deadlines and closes it as a net.Conn would.
// Without keep-alive on a fast target no call ever does (the connect is done
// on return, the answer and the server's close are in when the worker comes
// back from its yield), so a connection costs neither the poller's
// registration and removal, nor an os.File with its finalizer, nor runtime
// timers for its deadline, nor a close the scheduler sees.
//
// While detached, Read, Write and Close must come from one goroutine (the
// worker's; the descriptor has no poller lock to guard its reuse after a
// close), SetDeadline and LocalAddr from any. sockDial attaches at once a
// connection crypto/tls may close from its own goroutine.
type sockConn struct {
	fd     int // -1 once closed
	remote netip.AddrPort

	// deadline is when calls start failing, in Unix nanoseconds (0: never),
	// kept while detached: a call checks it against the clock before it
	// tries, as the poller does, so that a target streaming faster than it
	// is read still times out; attach hands it to the poller.
	deadline atomic.Int64

	mu   sync.Mutex // guards the fields below against SetDeadline from the stopper
	file *os.File   // nil until the first call that must wait; then owns fd
	rc   syscall.RawConn

	// The poller calls readFn and writeFn, built once per attach so a
	// request allocates nothing; buf, n and err carry their operands. Only
	// the worker that owns the connection touches them.
	readFn, writeFn func(fd uintptr) bool
	buf             []byte
	n               int
	err             error

	// spun, when set, lets a read that finds no data spin briefly before
	// it waits in the poller, adding the time spun (spin.go).
	spun *time.Duration

	// trunc makes reads discard what they receive (Skip).
	trunc bool
}

// Skip discards up to len(b) bytes of the stream as Read would return
// them, without copying them: recv with MSG_TRUNC, which TCP has honoured
// since Linux 2.4.4. The kernel is still handed b, as long as the bytes it
// discards, so that one which copied anyway would write only a buffer
// nothing reads.
func (c *sockConn) Skip(b []byte) (int, error) {
	c.trunc = true
	n, err := c.Read(b)
	c.trunc = false
	return n, err
}

// skipper is c itself when its connection can discard bytes without
// copying them (the engine's own plain socket), nil otherwise (TLS).
func (c *timedConn) skipper() skipper {
	if _, ok := c.Conn.(*sockConn); ok && c.sink != nil {
		return c
	}
	return nil
}

// skip discards up to n bytes, counted and timed as Read's.
func (c *timedConn) skip(n int) (int, error) {
	k, err := c.Conn.(*sockConn).Skip(c.sink[:min(n, len(c.sink))])
	c.count(k, err)
	return k, err
}

// Read reads as net.Conn does: io.EOF at the peer's close.
func (c *sockConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.buf, c.n, c.err = b, 0, nil
	if err := c.wait(false); err != nil {
		return 0, err
	}
	switch {
	case c.err != nil:
		return 0, c.err
	case c.n == 0:
		return 0, io.EOF
	}
	return c.n, nil
}

// Write writes all of b unless an error stops it.
func (c *sockConn) Write(b []byte) (int, error) {
	c.buf, c.n, c.err = b, 0, nil
	if err := c.wait(true); err != nil {
		return c.n, err
	}
	return c.n, c.err
}

// wait runs the read or write until it is done: once directly while
// detached, then, if the socket must wait, through the poller. It returns
// the poller's error (deadline, closed); the call's own error is in c.err.
// The file field is written only by this goroutine, so reading it here needs
// no lock.
func (c *sockConn) wait(write bool) error {
	if c.file == nil {
		switch {
		case c.fd < 0:
			return net.ErrClosed
		case c.pastDeadline():
			return os.ErrDeadlineExceeded
		case c.try(write):
			return nil
		case !write && c.spun != nil && c.spin():
			return nil
		}
		if err := c.attach(); err != nil {
			return err
		}
	}
	if write {
		return c.rc.Write(c.writeFn)
	}
	return c.rc.Read(c.readFn)
}

// pastDeadline reports whether the deadline has passed.
func (c *sockConn) pastDeadline() bool {
	d := c.deadline.Load()
	return d != 0 && time.Now().UnixNano() >= d
}

// try is one direct attempt at the read or write; false means it must wait.
func (c *sockConn) try(write bool) bool {
	if write {
		return c.rawWrite(uintptr(c.fd))
	}
	return c.rawRead(uintptr(c.fd))
}

// attach registers the socket with the poller and hands it the deadline.
func (c *sockConn) attach() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file != nil {
		return nil
	}
	if c.fd < 0 {
		return net.ErrClosed
	}
	// From here the file owns fd: closing it deregisters fd from the poller.
	f := os.NewFile(uintptr(c.fd), "")
	rc, err := f.SyscallConn()
	if d := c.deadline.Load(); err == nil && d != 0 {
		err = f.SetDeadline(time.Unix(0, d))
	}
	c.file, c.rc = f, rc // even on error, so that Close closes through f
	c.readFn, c.writeFn = c.rawRead, c.rawWrite
	return err
}

// rawRead is one read attempt; false means the socket must wait for data.
func (c *sockConn) rawRead(fd uintptr) bool {
	for {
		var n uintptr
		var errno syscall.Errno
		if c.trunc {
			n, _, errno = syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)), syscall.MSG_TRUNC, 0, 0)
		} else {
			n, _, errno = syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
		}
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

// rawWrite writes what the socket takes of buf; false means the socket must
// wait for room.
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

// SetDeadline sets the deadline of reads and writes: kept while detached,
// the poller's once attached.
func (c *sockConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.file != nil:
		return c.file.SetDeadline(t)
	case c.fd < 0:
		return net.ErrClosed
	}
	c.deadline.Store(unixNano(t))
	return nil
}

// unixNano is t in Unix nanoseconds, 0 for the zero time (no deadline).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(1, t.UnixNano())
}

// SetReadDeadline and SetWriteDeadline are for callers other than the
// worker (crypto/tls on close): rare enough to attach for.
func (c *sockConn) SetReadDeadline(t time.Time) error {
	if err := c.attach(); err != nil {
		return err
	}
	return c.file.SetReadDeadline(t)
}

func (c *sockConn) SetWriteDeadline(t time.Time) error {
	if err := c.attach(); err != nil {
		return err
	}
	return c.file.SetWriteDeadline(t)
}

// Close closes the socket: through the poller once attached, else with a
// raw close, which on a socket without SO_LINGER never blocks.
func (c *sockConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.file != nil:
		c.fd = -1
		return c.file.Close()
	case c.fd < 0:
		return net.ErrClosed
	}
	fd := c.fd
	c.fd = -1
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0); errno != 0 && errno != syscall.EINTR {
		return os.NewSyscallError("close", errno)
	}
	return nil
}

// LocalAddr returns the connection's local address, asked of the kernel
// only now so that the dial does not pay for it; nil once closed.
func (c *sockConn) LocalAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sa syscall.Sockaddr
	switch {
	case c.file != nil:
		if c.rc.Control(func(fd uintptr) { sa, _ = syscall.Getsockname(int(fd)) }) != nil {
			return nil
		}
	case c.fd >= 0:
		sa, _ = syscall.Getsockname(c.fd)
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
