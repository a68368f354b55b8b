package loadgen

import (
	"context"
	"fmt"
	"github.com/benchq/benchq/internal/measure"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// fullBacklogAddr returns the address of a listener whose accept queue is
// full: the kernel drops further SYNs, so a connect to it stays in progress,
// as to a silent host.
func fullBacklogAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	// Backlog 0 holds one connection that is never accepted.
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return addr
}

func TestRunConnectInProgress(t *testing.T) {
	url := "http://" + fullBacklogAddr(t) + "/"

	t.Run("timeout", func(t *testing.T) {
		m := run(t, measure.Plan{URLs: []string{url}, Requests: 2, Concurrency: 1, Timeout: 200 * time.Millisecond})
		checkEq(t, "Failures.Timeout", m.Failures.Timeout, 2)
		checkEq(t, "Failed", m.Failed, 2)
	})

	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		began := time.Now()
		m, err := Run(ctx, measure.Plan{URLs: []string{url}, Requests: 2, Concurrency: 1, Timeout: 30 * time.Second})
		if err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if took := time.Since(began); took > time.Second {
			t.Errorf("Run took %v after a cancel at 100ms, want < 1s", took)
		}
		checkEq(t, "Canceled", m.Canceled, true)
		checkEq(t, "Failed", m.Failed, 0)
	})
}

func TestRunIPv6Loopback(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	body := fixedBody(100)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetBody(body) }}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	for _, keepAlive := range []bool{false, true} {
		m := run(t, measure.Plan{URLs: []string{"http://" + ln.Addr().String() + "/"}, Requests: 20, Concurrency: 2, KeepAlive: keepAlive})
		checkEq(t, fmt.Sprintf("Complete (keep-alive %v)", keepAlive), m.Complete, 20)
		checkEq(t, fmt.Sprintf("Failed (keep-alive %v)", keepAlive), m.Failed, 0)
	}
}

// TestSelfConnectDetected makes a socket connect to its own address (bind
// to a loopback port, then connect to that port: Linux completes the
// simultaneous open) and checks selfConnected sees it, and not on a real
// connection to a listener.
func TestSelfConnectDetected(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	if err := syscall.Connect(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: port}); err != nil {
		t.Fatalf("connect to self: %v", err)
	}
	self, _ := sockaddr(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)))
	if !self.selfConnected(fd) {
		t.Errorf("selfConnected(socket connected to itself on port %d) = false, want true", port)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ap := l.Addr().(*net.TCPAddr).AddrPort()
	conn, ok, err := sockDial(t.Context(), ap, time.Now().Add(time.Second), false, false)
	if err != nil || !ok {
		t.Fatalf("sockDial(%s) = %v, %v", ap, ok, err)
	}
	defer conn.Close()
	other, _ := sockaddr(ap)
	if other.selfConnected(conn.(*sockConn).fd) {
		t.Errorf("selfConnected(connection to a listener) = true, want false")
	}
}
