package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/logbuf"
	"github.com/benchq/benchq/internal/redistest"
)

// TestServeWarnsOnEvictingRedis: a Redis that may evict keys would drop
// queued jobs and results silently, so serve says so when it starts, and
// says nothing when the policy is noeviction.
func TestServeWarnsOnEvictingRedis(t *testing.T) {
	for _, tt := range []struct {
		policy string
		warn   bool
	}{
		{"noeviction", false},
		{"allkeys-lru", true},
	} {
		t.Run(tt.policy, func(t *testing.T) {
			srv := redistest.Start(t)
			if err := srv.Client(t).ConfigSet(t.Context(), "maxmemory-policy", tt.policy).Err(); err != nil {
				t.Fatalf("CONFIG SET: %v", err)
			}
			cfg := config.Defaults()
			cfg.Command, cfg.Addr, cfg.RedisURL = config.CommandServe, "127.0.0.1:0", srv.URL()
			cfg.ShutdownTimeout = 5 * time.Second
			var logs logbuf.Buffer
			m := NewMain(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
			if err := m.Run(t.Context()); err != nil {
				t.Fatalf("Main.Run: %v", err)
			}
			if err := m.Close(); err != nil {
				t.Errorf("Main.Close: %v", err)
			}
			if got := strings.Contains(logs.String(), "not noeviction"); got != tt.warn {
				t.Errorf("maxmemory-policy %s: warned = %v, want %v; logs:\n%s", tt.policy, got, tt.warn, logs.String())
			}
		})
	}
}
