package redistest

import (
	"context"
	"testing"
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
