package loadgen

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// dialPair returns a sockConn dialled by sockDial to a loopback listener and
// the server's side of it.
func dialPair(t *testing.T) (*sockConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	conn, ok, err := sockDial(context.Background(), netip.MustParseAddrPort(ln.Addr().String()), time.Now().Add(time.Minute), false, false)
	if !ok || err != nil {
		t.Fatalf("sockDial = %v, %v; want true, nil", ok, err)
	}
	c := conn.(*sockConn)
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return c, srv
}

// awaitReadable waits until the kernel holds unread bytes for fd, so that a
// read cannot need the poller.
func awaitReadable(t *testing.T, fd int) {
	t.Helper()
	for range 1000 {
		var n int32
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); errno != 0 {
			t.Fatalf("ioctl(FIONREAD) = %v", errno)
		}
		if n > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no data arrived within 1s")
}

func TestSockConnStaysOffThePollerUntilItMustWait(t *testing.T) {
	c, srv := dialPair(t)
	defer c.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatalf("Write = %v, want nil", err)
	}
	buf := make([]byte, 16)
	if _, err := io.ReadFull(srv, buf[:4]); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	awaitReadable(t, c.fd)

	// The stopper's past deadline fails a call at once, data or not.
	checkEq(t, "SetDeadline(past)", c.SetDeadline(aLongTimeAgo), error(nil))
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Read after a past deadline = %v, want %v", err, os.ErrDeadlineExceeded)
	}
	// A deadline that passes without any call waiting fails the next one
	// too: a target streaming faster than it is read still times out.
	checkEq(t, "SetDeadline(1ms)", c.SetDeadline(time.Now().Add(time.Millisecond)), error(nil))
	time.Sleep(5 * time.Millisecond)
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Read after the deadline passed = %v, want %v", err, os.ErrDeadlineExceeded)
	}
	checkEq(t, "SetDeadline(future)", c.SetDeadline(time.Now().Add(time.Minute)), error(nil))
	n, err := c.Read(buf)
	checkEq(t, "Read", string(buf[:n]), "pong")
	checkEq(t, "Read error", err, error(nil))
	checkEq(t, "attached after reads that found data", c.file != nil, false)

	// Nothing to read: the read waits in the poller, bounded by the deadline.
	checkEq(t, "SetDeadline(20ms)", c.SetDeadline(time.Now().Add(20*time.Millisecond)), error(nil))
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Read with nothing sent = %v, want %v", err, os.ErrDeadlineExceeded)
	}
	checkEq(t, "attached after a read that waited", c.file != nil, true)

	checkEq(t, "SetDeadline(future)", c.SetDeadline(time.Now().Add(time.Minute)), error(nil))
	_ = srv.Close()
	if _, err := c.Read(buf); err != io.EOF {
		t.Errorf("Read after the server's close = %v, want io.EOF", err)
	}
}

func TestSockConnClose(t *testing.T) {
	for _, attached := range []bool{false, true} {
		c, srv := dialPair(t)
		if attached {
			if err := c.attach(); err != nil {
				t.Fatal(err)
			}
		}
		checkEq(t, "Close", c.Close(), error(nil))
		if err := c.Close(); !errors.Is(err, net.ErrClosed) && !errors.Is(err, os.ErrClosed) {
			t.Errorf("second Close (attached %v) = %v, want closed", attached, err)
		}
		if _, err := c.Write([]byte("x")); err == nil {
			t.Errorf("Write after Close (attached %v) = nil, want an error", attached)
		}
		// The server sees the close as the end of the stream.
		_ = srv.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := srv.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("server Read after Close (attached %v) = %v, want io.EOF", attached, err)
		}
	}
}
