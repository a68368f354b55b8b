package localredis

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/redistest"
)

func startIn(t *testing.T, dir string) *Server {
	t.Helper()
	s, err := Start(t.Context(), Options{Bin: redistest.Binary(t), Dir: dir})
	if err != nil {
		t.Fatalf("Start(%s): %v", dir, err)
	}
	t.Cleanup(func() { _ = s.Stop(5 * time.Second) })
	return s
}

func client(t *testing.T, socket string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Network: "unix", Addr: socket})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestDataSurvivesRestart: what one child stored, the next child started
// on the same directory has, and it runs with the settings benchq needs.
func TestDataSurvivesRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first := startIn(t, dir)
	c := client(t, first.Socket())
	if err := c.Set(t.Context(), "job", "done", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	for key, want := range map[string]string{"appendonly": "yes", "appendfsync": "everysec", "maxmemory-policy": "noeviction", "port": "0", "save": ""} {
		got, err := c.ConfigGet(t.Context(), key).Result()
		if err != nil || got[key] != want {
			t.Errorf("CONFIG GET %s = %v (%v), want %q", key, got, err, want)
		}
	}
	if err := first.Stop(5 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode = %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	second := startIn(t, dir)
	if got, err := client(t, second.Socket()).Get(t.Context(), "job").Result(); got != "done" {
		t.Errorf("GET job after restart = %q (%v), want done", got, err)
	}
}

// TestSecondStartOnSameDirIsRefused: two children writing one append-only
// file would corrupt it.
func TestSecondStartOnSameDirIsRefused(t *testing.T) {
	dir := t.TempDir()
	first := startIn(t, dir)
	_, err := Start(t.Context(), Options{Bin: redistest.Binary(t), Dir: dir})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Start = %v, want ErrLocked", err)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("error %q does not name the directory and the owner's pid %d", msg, os.Getpid())
	}
	if err := client(t, first.Socket()).Ping(t.Context()).Err(); err != nil {
		t.Errorf("first child after the refused start: %v", err)
	}
	if err := first.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	startIn(t, dir) // the lock went with the first
}

// TestStaleChildIsShutDown: a redis-server still serving the directory
// while no benchq holds its lock (what a killed benchq leaves where no
// Pdeathsig exists) is shut down, and the new child has its data.
func TestStaleChildIsShutDown(t *testing.T) {
	dir := t.TempDir()
	stale := newServer(dir, filepath.Join(dir, socketName), redistest.Binary(t), slog.New(slog.DiscardHandler))
	sc, err := stale.start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sc.cmd.Process.Kill()
		<-sc.exited
	})
	if err := stale.waitReady(t.Context(), sc, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := client(t, stale.Socket()).Set(t.Context(), "left", "behind", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s := startIn(t, dir)
	select {
	case <-sc.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the stale redis-server still runs after Start")
	}
	if s.Pid() == sc.pid() {
		t.Fatal("Start adopted the stale child")
	}
	if got, err := client(t, s.Socket()).Get(t.Context(), "left").Result(); got != "behind" {
		t.Errorf("GET left = %q (%v), want the stale child's data", got, err)
	}
}

// TestChildExitIsReported: a child that dies under benchq closes Done
// with a reason, and Stop afterwards still releases the directory.
func TestChildExitIsReported(t *testing.T) {
	dir := t.TempDir()
	s := startIn(t, dir)
	if err := syscall.Kill(s.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the child was killed")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Err = %v, want the kill", err)
	}
	if err := s.Stop(time.Second); err != nil {
		t.Errorf("Stop after exit = %v", err)
	}
	startIn(t, dir)
}

func TestStartErrors(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, bin, want string
	}{
		{"socket path too long", filepath.Join(base, strings.Repeat("d", 120)), "", "too long"},
		{"not a directory", filepath.Join(file, "sub"), "", "create data directory"},
		{"no such binary", filepath.Join(base, "nobin"), filepath.Join(base, "redis-server-missing"), "start redis-server"},
		{"binary that is not redis-server", filepath.Join(base, "false"), "/bin/false", "exited before it was ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := tt.bin
			if bin == "" {
				bin = redistest.Binary(t)
			}
			s, err := Start(t.Context(), Options{Bin: bin, Dir: tt.dir, StartTimeout: 5 * time.Second})
			if err == nil {
				_ = s.Stop(time.Second)
				t.Fatalf("Start succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
