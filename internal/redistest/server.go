package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process owned by one test.
type Server struct {
	Addr string // 127.0.0.1:port
	cmd  *exec.Cmd
}

// URL returns the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Client returns a go-redis client for the server, closed when the test ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Start launches redis-server with persistence off and noeviction, as
// benchq requires, and waits until it answers PING. The port is picked by
// listening on :0 and closing, so another process may take it first: a
// server that exits before it is ready, or a PING answered by a different
// redis-server, means a lost race, and Start tries again on a new port.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		s, err := start(t, bin)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("redistest: %v", lastErr)
	return nil
}

// Binary returns the path of the redis-server on PATH, for tests that
// start it their own way; without one the test is skipped, or fails under
// CI.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redistest: redis-server not on PATH under CI: %v", err)
		}
		t.Skip("redistest: redis-server not installed (apt-get install -y redis-server); skipping integration test")
	}
	return bin
}

func start(t testing.TB, bin string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin,
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no",
		"--maxmemory-policy", "noeviction",
		"--dir", t.TempDir(),
	)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	if err := s.waitReady(5*time.Second, exited); err != nil {
		stop()
		return nil, err
	}
	t.Cleanup(stop)
	return s, nil
}

// waitReady waits for PING from this very process (its pid in INFO), so a
// port taken by another test's server is not mistaken for ours.
func (s *Server) waitReady(limit time.Duration, exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	want := "process_id:" + strconv.Itoa(s.cmd.Process.Pid) + "\r\n"
	deadline := time.Now().Add(limit)
	for {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on %s exited before it was ready (port taken?)", s.Addr)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		info, err := c.Info(ctx, "server").Result()
		cancel()
		if err == nil {
			if strings.Contains(info, want) {
				return nil
			}
			return fmt.Errorf("another redis-server answers on %s", s.Addr)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not ready after %s: %w", s.Addr, limit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
