package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process owned by one test.
type Server struct {
	Addr string // 127.0.0.1:port
	bin  string
	port int
	dir  string
	aof  bool // append-only file, synced on every write
	// mode builds the arguments that make the server a cluster node or a
	// sentinel; nil for a plain server.
	mode func(s *Server) ([]string, error)

	mu   sync.Mutex
	cmd  *exec.Cmd     // the running process, nil once stopped
	done chan struct{} // closed when cmd exited
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
	return startWith(t, false)
}

// StartPersistent is Start with an append-only file synced on every
// write (appendfsync always), so that Kill and Restart lose nothing that
// was acknowledged: the fault tests' Redis that crashes and comes back.
func StartPersistent(t testing.TB) *Server {
	t.Helper()
	return startWith(t, true)
}

func startWith(t testing.TB, aof bool) *Server {
	t.Helper()
	return startMode(t, aof, nil)
}

func startMode(t testing.TB, aof bool, mode func(*Server) ([]string, error)) *Server {
	t.Helper()
	bin := Binary(t)
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		s, err := start(t, bin, aof, mode)
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

func start(t testing.TB, bin string, aof bool, mode func(*Server) ([]string, error)) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), bin: bin, port: port, dir: t.TempDir(), aof: aof, mode: mode}
	if err := s.launch(); err != nil {
		return nil, err
	}
	t.Cleanup(s.Kill)
	return s, nil
}

// launch starts the process on s.port and waits until it is ready.
func (s *Server) launch() error {
	args := []string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "",
		"--maxmemory-policy", "noeviction",
		"--dir", s.dir,
		"--appendonly", "no",
	}
	if s.aof {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	}
	if s.mode != nil {
		extra, err := s.mode(s)
		if err != nil {
			return err
		}
		args = append(extra, args...) // a sentinel's config file comes first
	}
	cmd := exec.Command(s.bin, args...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	if err := s.waitReady(5*time.Second, cmd.Process.Pid, done); err != nil {
		s.Kill()
		return err
	}
	return nil
}

// Kill stops the server as a crash would (SIGKILL), and waits until it
// exited: its connections drop and its port refuses connections. The
// data is gone, unless the server is persistent (StartPersistent). Killing a stopped server is a no-op.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Pause freezes the server (SIGSTOP) with its data and connections: a
// hung Redis, whose clients see timeouts. Resume thaws it; commands sent
// meanwhile are then executed.
func (s *Server) Pause(t testing.TB) { s.signal(t, syscall.SIGSTOP) }

// Resume ends Pause.
func (s *Server) Resume(t testing.TB) { s.signal(t, syscall.SIGCONT) }

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil {
		t.Fatalf("redistest: %v to a killed server", sig)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("redistest: %v: %v", sig, err)
	}
}

// Restart starts a killed server again on the same address (empty, or
// with its append-only file replayed when persistent), so
// clients that kept their address reconnect to it. It fails the test if
// the port was taken meanwhile or the server does not come up.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Kill()
	if err := s.launch(); err != nil {
		t.Fatalf("redistest: restart on %s: %v", s.Addr, err)
	}
}

// waitReady waits for PING from this very process (its pid in INFO), so a
// port taken by another test's server is not mistaken for ours.
func (s *Server) waitReady(limit time.Duration, pid int, exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	want := "process_id:" + strconv.Itoa(pid) + "\r\n"
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

// RunOutOfMemory makes the server refuse every write with OOM, as a full
// Redis under noeviction does, by lowering maxmemory below what it uses;
// reads and DEL keep working. RecoverMemory lifts the limit again.
func (s *Server) RunOutOfMemory(t testing.TB) { s.configSet(t, "maxmemory", "1") }

// RecoverMemory ends RunOutOfMemory.
func (s *Server) RecoverMemory(t testing.TB) { s.configSet(t, "maxmemory", "0") }

func (s *Server) configSet(t testing.TB, param, value string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ConfigSet(ctx, param, value).Err(); err != nil {
		t.Fatalf("redistest: CONFIG SET %s %s: %v", param, value, err)
	}
}
