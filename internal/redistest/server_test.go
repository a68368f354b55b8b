package redistest

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestStartServesCommandsWithNoeviction(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	got, err := c.ConfigGet(ctx, "maxmemory-policy").Result()
	if err != nil {
		t.Fatalf("CONFIG GET: %v", err)
	}
	if got["maxmemory-policy"] != "noeviction" {
		t.Errorf("maxmemory-policy = %q, want noeviction", got["maxmemory-policy"])
	}
}

// TestKillAndRestart: a killed server refuses connections; restarted, it
// answers on the same address, empty, and a client that kept its address
// reconnects without being rebuilt.
func TestKillAndRestart(t *testing.T) {
	s := Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	s.Kill()
	var opErr *net.OpError
	if err := c.Get(ctx, "k").Err(); !errors.As(err, &opErr) {
		t.Fatalf("GET on a killed server = %v, want a network error", err)
	}
	s.Kill() // a second kill is a no-op
	s.Restart(t)
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Errorf("GET after restart = %v, want redis.Nil (empty server)", err)
	}
	if err := c.Set(ctx, "k", "v2", time.Minute).Err(); err != nil {
		t.Errorf("SET after restart: %v", err)
	}
}

func TestRunOutOfMemoryRefusesWrites(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	s.RunOutOfMemory(t)
	if err := c.Set(ctx, "k2", "v", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM ") {
		t.Errorf("SET out of memory = %v, want OOM", err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Errorf("GET out of memory = %q, %v, want the value", v, err)
	}
	s.RecoverMemory(t)
	if err := c.Set(ctx, "k2", "v", 0).Err(); err != nil {
		t.Errorf("SET after RecoverMemory: %v", err)
	}
}

// TestPauseResume: a paused server times its clients out and keeps its
// data; resumed, the same client is served again.
func TestPauseResume(t *testing.T) {
	s := Start(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET: %v", err)
	}
	s.Pause(t)
	var netErr net.Error
	if err := c.Get(ctx, "k").Err(); !errors.As(err, &netErr) || !netErr.Timeout() {
		s.Resume(t)
		t.Fatalf("GET on a paused server = %v, want a timeout", err)
	}
	s.Resume(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		v, err := c.Get(ctx, "k").Result()
		if err == nil && v == "v" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET after Resume = %q, %v, want the value", v, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPersistentRestartKeepsWrites: a persistent server killed with
// SIGKILL comes back with every acknowledged write.
func TestPersistentRestartKeepsWrites(t *testing.T) {
	s := StartPersistent(t)
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	for i := range 100 {
		if err := c.RPush(ctx, "l", i).Err(); err != nil {
			t.Fatalf("RPUSH: %v", err)
		}
	}
	s.Kill()
	s.Restart(t)
	if n, err := c.LLen(ctx, "l").Result(); err != nil || n != 100 {
		t.Errorf("LLEN after kill and restart = %d, %v; want 100", n, err)
	}
}
