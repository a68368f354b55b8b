package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/store"
)

func mustKey(t *testing.T, s *store.Store, name string, q apikey.Quota) (apikey.Key, string) {
	t.Helper()
	k, plain, err := apikey.New(name, false, q, "", nowUTC())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddKey(t.Context(), k); err != nil {
		t.Fatalf("AddKey(%s) = %v", name, err)
	}
	return k, plain
}

func TestKeysRoundTrip(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	a, plainA := mustKey(t, s, "ci", apikey.Quota{MaxConcurrency: 8, MaxDuration: time.Minute})
	b, _ := mustKey(t, s, "alice", apikey.Quota{})

	got, err := apikey.Authenticate(ctx, s, plainA)
	if err != nil || got.ID != a.ID || got.Quota != a.Quota {
		t.Fatalf("Authenticate(a) = %+v, %v, want key %s with its quota", got, err, a.ID)
	}
	if n, err := s.ActiveKeyCount(ctx); n != 2 || err != nil {
		t.Errorf("ActiveKeyCount = %d, %v, want 2", n, err)
	}
	if err := s.AddKey(ctx, a); !errors.Is(err, store.ErrConflict) {
		t.Errorf("AddKey(same key again) = %v, want ErrConflict", err)
	}

	// Nothing stored holds the plaintext.
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		v, _ := rdb.Dump(ctx, k).Result()
		if strings.Contains(v, plainA) || strings.Contains(k, plainA) {
			t.Errorf("Redis key %s holds the plaintext key", k)
		}
	}

	revoked, err := s.RevokeKey(ctx, a.ID, nowUTC())
	if err != nil || !revoked.Revoked() {
		t.Fatalf("RevokeKey = %+v, %v, want revoked", revoked, err)
	}
	if _, err := apikey.Authenticate(ctx, s, plainA); !errors.Is(err, apikey.ErrRevoked) {
		t.Errorf("Authenticate(revoked) = %v, want ErrRevoked", err)
	}
	again, err := s.RevokeKey(ctx, a.ID, nowUTC().Add(time.Hour))
	if err != nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
		t.Errorf("RevokeKey twice = %v, %v, want the first revocation time kept", again.RevokedAt, err)
	}
	if n, _ := s.ActiveKeyCount(ctx); n != 1 {
		t.Errorf("ActiveKeyCount after revoke = %d, want 1", n)
	}
	if n, err := s.KeyCount(ctx); n != 2 || err != nil {
		t.Errorf("KeyCount after revoke = %d, %v, want 2: a revoked key was still created", n, err)
	}
	if _, err := s.RevokeKey(ctx, "key_nope", nowUTC()); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RevokeKey(unknown) = %v, want ErrNotFound", err)
	}

	list, err := s.ListKeys(ctx)
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("ListKeys = %+v, %v, want [a b] oldest first", list, err)
	}
	if !list[0].Revoked() || list[1].Revoked() {
		t.Errorf("ListKeys revoked flags = %v %v, want true false", list[0].Revoked(), list[1].Revoked())
	}
}

func TestKeyByHashUnknown(t *testing.T) {
	s, _ := newStore(t)
	_, err := s.KeyByHash(t.Context(), apikey.Hash("bq_nobody"))
	if !errors.Is(err, store.ErrNotFound) || !errors.Is(err, apikey.ErrUnknown) {
		t.Errorf("KeyByHash(unknown) = %v, want ErrNotFound and apikey.ErrUnknown", err)
	}
}
