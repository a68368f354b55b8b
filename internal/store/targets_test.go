package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/store"
)

func TestTargetHostsPerOwner(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	first := store.TargetHost{Host: "127.0.0.1:8081", Token: "tok-a", CreatedAt: base}
	got, err := s.EnsureTargetHost(ctx, "key-a", first)
	if err != nil || got.Token != "tok-a" {
		t.Fatalf("EnsureTargetHost = %+v, %v; want token tok-a", got, err)
	}
	// A second caller with another fresh token gets the stored one.
	got, err = s.EnsureTargetHost(ctx, "key-a", store.TargetHost{Host: "127.0.0.1:8081", Token: "tok-b"})
	if err != nil || got.Token != "tok-a" {
		t.Fatalf("EnsureTargetHost again = %+v, %v; want the first token tok-a", got, err)
	}
	if _, err := s.TargetHost(ctx, "key-b", "127.0.0.1:8081"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("TargetHost(other key) = %v, want ErrNotFound: tokens are per key", err)
	}
	got.Verified, got.CheckedAt, got.Detail = true, base.Add(time.Minute), "found"
	if err := s.SaveTargetCheck(ctx, "key-a", got); err != nil {
		t.Fatalf("SaveTargetCheck: %v", err)
	}
	stale := got
	stale.Token = "tok-b"
	if err := s.SaveTargetCheck(ctx, "key-a", stale); !errors.Is(err, store.ErrConflict) {
		t.Errorf("SaveTargetCheck(other token) = %v, want ErrConflict", err)
	}
	if err := s.SaveTargetCheck(ctx, "key-a", store.TargetHost{Host: "nowhere:1", Token: "x"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SaveTargetCheck(unknown host) = %v, want ErrNotFound", err)
	}
	if _, err := s.EnsureTargetHost(ctx, "key-a", store.TargetHost{Host: "127.0.0.1:8080", Token: "tok-c"}); err != nil {
		t.Fatal(err)
	}
	list, err := s.TargetHosts(ctx, "key-a")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Host != "127.0.0.1:8080" || list[1].Host != "127.0.0.1:8081" || !list[1].Verified || !list[1].CheckedAt.Equal(base.Add(time.Minute)) {
		t.Errorf("TargetHosts(key-a) = %+v, want 8080 then the verified 8081", list)
	}
	if list, err := s.TargetHosts(ctx, "key-b"); err != nil || len(list) != 0 {
		t.Errorf("TargetHosts(key-b) = %+v, %v; want none", list, err)
	}
}

func TestTargetHostsExpireAfterRetention(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	th, err := s.EnsureTargetHost(ctx, "key-ttl", store.TargetHost{Host: "127.0.0.1:8081", Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "*targets*key-ttl*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("keys = %v, %v; want the one target hash", keys, err)
	}
	ttl := func() time.Duration {
		d, err := rdb.PTTL(ctx, keys[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := ttl(); d <= 0 || d > testRetention {
		t.Fatalf("TTL after EnsureTargetHost = %v, want (0, %v]", d, testRetention)
	}
	if err := rdb.Persist(ctx, keys[0]).Err(); err != nil {
		t.Fatal(err)
	}
	th.Verified = true
	if err := s.SaveTargetCheck(ctx, "key-ttl", th); err != nil {
		t.Fatal(err)
	}
	if d := ttl(); d <= 0 || d > testRetention {
		t.Errorf("TTL after SaveTargetCheck = %v, want it renewed to (0, %v]", d, testRetention)
	}
}
