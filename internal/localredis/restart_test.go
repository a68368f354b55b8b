package localredis

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/redistest"
)

func TestRestartWait(t *testing.T) {
	p := RestartPolicy{}.withDefaults()
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{
		{0, 100 * time.Millisecond},
		{1, 200 * time.Millisecond},
		{3, 800 * time.Millisecond},
		{5, 3200 * time.Millisecond},
		{6, 5 * time.Second},
		{60, 5 * time.Second},
	} {
		if got := p.wait(tc.failures); got != tc.want {
			t.Errorf("wait(%d) = %s, want %s", tc.failures, got, tc.want)
		}
	}
}

// syncBuffer is a log sink the child's supervisor and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startRestarting(t *testing.T, dir string, p RestartPolicy, log *syncBuffer) *Server {
	t.Helper()
	p.Enabled = true
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, err := Start(t.Context(), Options{Bin: redistest.Binary(t), Dir: dir, Logger: logger, Restart: p})
	if err != nil {
		t.Fatalf("Start(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = s.Stop(5 * time.Second) })
	return s
}

// TestKilledChildIsRestarted: a child killed with SIGKILL is started
// again on the same socket with the data of its append-only file, the
// restart is logged with the new pid, and Done stays open.
func TestKilledChildIsRestarted(t *testing.T) {
	log := newSyncBuffer()
	s := startRestarting(t, t.TempDir(), RestartPolicy{}, log)
	c := client(t, s.Socket())
	if err := c.Set(t.Context(), "job", "kept", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		old := s.Pid()
		if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(log.String(), "redis-server child restarted") <= round || c.Ping(t.Context()).Err() != nil {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no child answering 10 s after the kill; log:\n%s", round, log)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got, err := c.Get(t.Context(), "job").Result(); got != "kept" {
			t.Errorf("round %d: GET job after the restart = %q (%v), want kept", round, got, err)
		}
		select {
		case <-s.Done():
			t.Fatalf("round %d: Done closed although the child was restarted: %v", round, s.Err())
		default:
		}
		if s.Pid() == old {
			t.Errorf("round %d: Pid = the killed child's %d", round, old)
		}
	}
	if n := strings.Count(log.String(), "redis-server child restarted"); n != 2 {
		t.Errorf("log names %d restarts, want 2:\n%s", n, log)
	}
}

// TestRestartGivesUp: a child that fails before it answers is tried
// GiveUpAfter times in a row, then Done closes with its reason, said in
// the log.
func TestRestartGivesUp(t *testing.T) {
	log := newSyncBuffer()
	s := startRestarting(t, t.TempDir(), RestartPolicy{MinWait: 10 * time.Millisecond, GiveUpAfter: 3}, log)
	broken := filepath.Join(t.TempDir(), "redis-server")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho 'Fatal error, cannot open the append only file' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.bin = broken
	s.mu.Unlock()
	if err := syscall.Kill(s.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("Done still open 10 s after the child started failing; log:\n%s", log)
	}
	err := s.Err()
	if err == nil || !strings.Contains(err.Error(), "gave up") || !strings.Contains(err.Error(), "cannot open the append only file") {
		t.Errorf("Err = %v, want giving up, with the child's last output", err)
	}
	if !strings.Contains(log.String(), "not restarting it again") {
		t.Errorf("log does not say restarts ended:\n%s", log)
	}
}
