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
	// Restart, when Enabled, starts the child again when it exits on its
	// own (restart.go); otherwise its exit closes Done.
	Restart RestartPolicy
}

// Server is a running redis-server child owning a data directory.
type Server struct {
	dir     string
	socket  string
	bin     string
	lock    *os.File
	out     *outputLog
	logger  *slog.Logger
	restart RestartPolicy
	limit   time.Duration // of a child's start, until it answers

	mu       sync.Mutex
	cur      *child        // the child running or last run
	stopping chan struct{} // closed when Stop begins

	done chan struct{} // closed once no child runs and none will
	err  error         // why, set before done closes

	stopOnce sync.Once
	stopErr  error
}

// child is one redis-server process of a Server.
type child struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed once it has exited
	waitErr error         // cmd.Wait's result (or why it never ran), set before exited closes
	readyAt time.Time     // when it first answered; zero if it never did (under Server.mu)
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
	limit := opts.StartTimeout
	if limit <= 0 {
		limit = time.Minute
	}
	s := newServer(dir, socket, opts.Bin, logger)
	s.lock, s.limit, s.restart = lock, limit, opts.Restart.withDefaults()
	c, err := s.spawn()
	if err != nil {
		_ = lock.Close()
		return nil, err
	}
	go s.supervise(c)
	if err := s.waitReady(ctx, c, limit); err != nil {
		_ = s.Stop(5 * time.Second)
		return nil, err
	}
	s.markReady(c)
	return s, nil
}

func newServer(dir, socket, bin string, logger *slog.Logger) *Server {
	return &Server{dir: dir, socket: socket, bin: bin, logger: logger, out: newOutputLog(logger),
		stopping: make(chan struct{}), done: make(chan struct{})}
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

// Pid is the process id of the child running, or of the last one.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.cmd.Process.Pid
}

// Done is closed when the child has exited and no other will be started:
// it was stopped, it exited without a restart policy, or restarting it
// was given up.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err says why the child exited for good; call it after Done is closed.
func (s *Server) Err() error { return s.err }

// exitErr is why child c exited, with the last lines it wrote; nil when
// it exited cleanly.
func (s *Server) exitErr(c *child) error {
	if c.waitErr == nil {
		return nil
	}
	return fmt.Errorf("redis-server: %w%s", c.waitErr, s.out.tail())
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
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return nil // the exit was reported through Done and Err
	default:
	}
	// Under mu, so no restart starts a child after this one is signalled.
	close(s.stopping)
	c := s.cur
	s.mu.Unlock()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		_ = c.cmd.Process.Kill()
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-s.done:
		return s.Err()
	case <-t.C:
	}
	_ = c.cmd.Process.Kill()
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

// spawn starts a child and makes it the current one; it fails once Stop
// has begun.
func (s *Server) spawn() (*child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stopping:
		return nil, errStopped
	default:
	}
	c, err := s.start()
	if err != nil {
		return nil, err
	}
	s.cur = c
	return c, nil
}

func (s *Server) start() (*child, error) {
	cmd := exec.Command(s.bin,
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
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = s.out, s.out
	cmd.SysProcAttr = childAttr()
	c := &child{cmd: cmd, exited: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the child ends,
		// not the process: this goroutine keeps its thread for as long as
		// the child lives, and the thread ends with it.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("start redis-server: %w", err)
			return
		}
		started <- nil
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return c, nil
}

// waitReady polls PING until child c answers (it answers LOADING while it
// reads its file), fails, or the limit passes.
func (s *Server) waitReady(ctx context.Context, c *child, limit time.Duration) error {
	rc := redis.NewClient(&redis.Options{Network: "unix", Addr: s.socket, MaxRetries: -1, DialTimeout: time.Second})
	defer rc.Close()
	deadline := time.Now().Add(limit)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := rc.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			if err := s.exitErr(c); err != nil {
				return fmt.Errorf("redis-server exited before it was ready: %w", err)
			}
			return errors.New("redis-server exited before it was ready")
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
