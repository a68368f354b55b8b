package localredis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Names inside the data directory. redis-server's own files (the
// appendonlydir it writes) sit beside them.
const (
	lockName   = "benchq.lock"
	socketName = "redis.sock"
)

// maxSocketPath is the longest unix socket path every unix accepts (macOS
// keeps 104 bytes with the terminating NUL; Linux 108).
const maxSocketPath = 103

// ErrLocked means another benchq process owns the data directory.
var ErrLocked = errors.New("data directory in use by another benchq")

// errHeld is what lockFile returns when another process holds the lock.
var errHeld = errors.New("lock held")

// Options configure Start.
type Options struct {
	// Bin is the redis-server executable.
	Bin string
	// Dir is the data directory, created (mode 0700) when missing.
	Dir string
	// Logger receives the child's output at debug level, and the shutdown
	// of a child left running by an earlier benchq as a warning; nil
	// discards them.
	Logger *slog.Logger
	// StartTimeout bounds the child's loading of its file until it answers
	// PING; 0 means one minute.
	StartTimeout time.Duration
}

// Server is a running redis-server child owning a data directory.
type Server struct {
	dir    string
	socket string
	cmd    *exec.Cmd
	lock   *os.File
	out    *outputLog

	done    chan struct{} // closed once the child has exited
	waitErr error         // cmd.Wait's result, set before done closes

	stopOnce sync.Once
	stopErr  error
}

// Start locks the data directory, shuts down a redis-server an earlier
// benchq left running in it, starts redis-server with the append-only file
// on and waits until it answers. A directory another benchq holds is an
// error wrapping ErrLocked.
func Start(ctx context.Context, opts Options) (*Server, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("data directory %q: %w", opts.Dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	socket := SocketIn(dir)
	if len(socket) > maxSocketPath {
		return nil, fmt.Errorf("data directory %s is too long for the Redis unix socket inside it (%d bytes, at most %d): choose a shorter one", dir, len(socket), maxSocketPath)
	}
	lock, err := acquire(dir)
	if err != nil {
		return nil, err
	}
	if err := stopStale(ctx, socket, logger); err != nil {
		_ = lock.Close()
		return nil, err
	}
	s := &Server{dir: dir, socket: socket, lock: lock, out: newOutputLog(logger), done: make(chan struct{})}
	if err := s.start(opts.Bin); err != nil {
		_ = lock.Close()
		return nil, err
	}
	limit := opts.StartTimeout
	if limit <= 0 {
		limit = time.Minute
	}
	if err := s.waitReady(ctx, limit); err != nil {
		_ = s.Stop(5 * time.Second)
		return nil, err
	}
	return s, nil
}

// Dir is the absolute data directory.
func (s *Server) Dir() string { return s.dir }

// Socket is the absolute path of the unix socket the child listens on.
func (s *Server) Socket() string { return s.socket }

// URL is the redis URL of the child ("unix:///…/redis.sock"), for the CLI
// commands that take --redis-url.
func (s *Server) URL() string { return "unix://" + s.socket }

// SocketIn is the path of the unix socket a child started on data
// directory dir listens on, for a client that finds it by the directory.
func SocketIn(dir string) string { return filepath.Join(dir, socketName) }

// Pid is the child's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Done is closed when the child has exited, whether stopped or not.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err says why the child exited; call it after Done is closed.
func (s *Server) Err() error {
	if s.waitErr == nil {
		return nil
	}
	return fmt.Errorf("redis-server: %w%s", s.waitErr, s.out.tail())
}

// Stop sends the child SIGTERM (it flushes its file and exits), kills it if
// it is still running after timeout, and releases the data directory. It is
// safe to call twice and after the child exited on its own.
func (s *Server) Stop(timeout time.Duration) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(timeout) })
	return s.stopErr
}

func (s *Server) stop(timeout time.Duration) error {
	defer s.lock.Close() // releases the flock
	select {
	case <-s.done:
		return nil // the exit was reported through Done and Err
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		_ = s.cmd.Process.Kill()
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.done:
		return s.Err()
	case <-t.C:
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	return fmt.Errorf("redis-server did not exit within %s of SIGTERM and was killed; writes of its last second may be lost", timeout)
}

// acquire takes the data directory's lock and writes this process's pid
// into it, for the message another benchq gets. The kernel drops the lock
// when the process ends however it ends, so a lock is never stale.
func acquire(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		if errors.Is(err, errHeld) {
			owner := "unknown pid"
			if b, rerr := os.ReadFile(path); rerr == nil && len(bytes.TrimSpace(b)) > 0 {
				owner = "pid " + string(bytes.TrimSpace(b))
			}
			return nil, fmt.Errorf("%s: %w (%s)", dir, ErrLocked, owner)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// stopStale shuts down a redis-server answering on the socket. With the
// lock held no live benchq owns it: it is the child of one that died
// without stopping it (outside Linux, where nothing signals the child).
// SHUTDOWN flushes its file before it exits, and its socket goes away only
// after that, so the new child starts from everything the old one had.
func stopStale(ctx context.Context, socket string, logger *slog.Logger) error {
	if !answers(socket) {
		return nil // a leftover socket file is replaced by redis-server
	}
	logger.Warn("benchq: shutting down a redis-server left running in the data directory by an earlier benchq", "socket", socket)
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: socket, MaxRetries: -1})
	sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	err := c.Shutdown(sctx).Err()
	_ = c.Close()
	for answers(socket) {
		if sctx.Err() != nil {
			return fmt.Errorf("a redis-server left by an earlier benchq still answers on %s (shutdown: %v): stop it first", socket, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// answers reports whether something accepts connections on the socket.
func answers(socket string) bool {
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

func (s *Server) start(bin string) error {
	s.cmd = exec.Command(bin,
		// No TCP listener at all: the socket alone, whose mode admits
		// only this user.
		"--port", "0",
		"--unixsocket", s.socket, "--unixsocketperm", "700",
		"--dir", s.dir,
		"--appendonly", "yes", "--appendfsync", "everysec",
		// The append-only file is the persistence; RDB snapshots would
		// write the same data again.
		"--save", "",
		"--maxmemory-policy", "noeviction",
		"--daemonize", "no",
	)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.SysProcAttr = childAttr()
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the child ends,
		// not the process: this goroutine keeps its thread for as long as
		// the child lives, and the thread ends with it.
		runtime.LockOSThread()
		if err := s.cmd.Start(); err != nil {
			started <- fmt.Errorf("start redis-server: %w", err)
			return
		}
		started <- nil
		s.waitErr = s.cmd.Wait()
		close(s.done)
	}()
	return <-started
}

// waitReady polls PING until the child answers (it answers LOADING while it
// reads its file), fails, or the limit passes.
func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: s.socket, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(limit)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("redis-server exited before it was ready: %w", s.Err())
		case <-ctx.Done():
			return fmt.Errorf("waiting for redis-server: %w", ctx.Err())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server not ready within %s: %w%s", limit, err, s.out.tail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// outputLog sends the child's output lines to the logger at debug level
// and keeps the last few, for the error when the child fails.
type outputLog struct {
	logger *slog.Logger
	mu     sync.Mutex
	part   []byte
	last   []string
}

const keptLines = 10

func newOutputLog(logger *slog.Logger) *outputLog { return &outputLog{logger: logger} }

func (o *outputLog) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.part = append(o.part, p...)
	for {
		i := bytes.IndexByte(o.part, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSpace(string(o.part[:i]))
		o.part = o.part[i+1:]
		if line == "" {
			continue
		}
		o.logger.Debug("redis-server", "line", line)
		if len(o.last) == keptLines {
			o.last = o.last[1:]
		}
		o.last = append(o.last, line)
	}
	return len(p), nil
}

// tail is the kept lines as a suffix for an error message, "" if none.
func (o *outputLog) tail() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.last) == 0 {
		return ""
	}
	return "; its last output:\n" + strings.Join(o.last, "\n")
}
