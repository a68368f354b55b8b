package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

func TestIdempotencyKeyLifecycle(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()

	claim, won, err := s.ClaimIdempotencyKey(ctx, "alice", "k1", "h1")
	if err != nil || !won || !claim.Pending() {
		t.Fatalf("first claim = %+v, won %v, %v; want a won pending claim", claim, won, err)
	}
	rec, won, err := s.ClaimIdempotencyKey(ctx, "alice", "k1", "h2")
	if err != nil || won || !rec.Pending() || rec.BodyHash != "h1" {
		t.Fatalf("second claim = %+v, won %v, %v; want the pending record of h1", rec, won, err)
	}
	// Keys are per owner.
	if _, won, err := s.ClaimIdempotencyKey(ctx, "bob", "k1", "h1"); err != nil || !won {
		t.Errorf("bob's claim of alice's key = won %v, %v; want won", won, err)
	}
	keys, err := rdb.Keys(ctx, "benchq:idempotency:*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("idempotency keys = %v, %v; want 2", keys, err)
	}
	if err := s.CompleteIdempotencyKey(ctx, claim, "job-1", false); err != nil {
		t.Fatal(err)
	}
	rec, err = s.IdempotencyKey(ctx, "alice", "k1")
	if err != nil || rec.Pending() || rec.JobID != "job-1" || rec.BodyHash != "h1" {
		t.Fatalf("record = %+v, %v; want job-1 with h1", rec, err)
	}
	ttl := rdb.TTL(ctx, keys[0]).Val()
	if other := rdb.TTL(ctx, keys[1]).Val(); other > ttl {
		ttl = other
	}
	if ttl <= store.IdempotencyTTL-time.Minute || ttl > store.IdempotencyTTL {
		t.Errorf("TTL of a completed key = %v, want about %v", ttl, store.IdempotencyTTL)
	}
	// A claim completed or released once cannot act again.
	if err := s.CompleteIdempotencyKey(ctx, claim, "job-2", false); !errors.Is(err, store.ErrIdempotencyClaimLost) {
		t.Errorf("completing a spent claim = %v, want ErrIdempotencyClaimLost", err)
	}
	if err := s.ReleaseIdempotencyKey(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := s.IdempotencyKey(ctx, "alice", "k1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("released key = %v, want ErrNotFound", err)
	}
}

// The record remembers whether the answer carried a generated webhook
// secret, so a replay knows whether to show it again.
// Without it the record is as before the flag existed.
func TestIdempotencyKeySecretIssued(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	for _, issued := range []bool{false, true} {
		key := "k-" + map[bool]string{false: "plain", true: "secret"}[issued]
		claim, _, err := s.ClaimIdempotencyKey(ctx, "alice", key, "h1")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CompleteIdempotencyKey(ctx, claim, "job-1", issued); err != nil {
			t.Fatal(err)
		}
		rec, err := s.IdempotencyKey(ctx, "alice", key)
		if err != nil || rec.JobID != "job-1" || rec.SecretIssued != issued {
			t.Errorf("record after completing with secret issued %v = %+v, %v", issued, rec, err)
		}
	}
}

func TestIdempotencyClaimIsExclusive(t *testing.T) {
	s, _ := newStore(t)
	const n = 20
	var wins sync.WaitGroup
	won := make(chan bool, n)
	for range n {
		wins.Add(1)
		go func() {
			defer wins.Done()
			_, w, err := s.ClaimIdempotencyKey(t.Context(), "", "k", "h")
			if err != nil {
				t.Error(err)
			}
			won <- w
		}()
	}
	wins.Wait()
	close(won)
	count := 0
	for w := range won {
		if w {
			count++
		}
	}
	if count != 1 {
		t.Errorf("%d of %d concurrent claims won, want exactly 1", count, n)
	}
}

func TestLatestJob(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	main := map[string]string{"branch": "main"}
	jobs := []struct {
		id, owner string
		labels    map[string]string
		succeeded bool
	}{
		{"j1", "alice", main, true},
		{"j2", "alice", main, true},
		{"j3", "alice", main, false},                              // newest main, but queued
		{"j4", "alice", map[string]string{"branch": "dev"}, true}, // other branch
		{"j5", "bob", main, true},                                 // newest of all, another owner
		{"j6", "", main, true},                                    // open mode's owner
	}
	for i, jb := range jobs {
		j := newJob(jb.id, jb.owner, i, jb.labels)
		mustCreate(t, s, j)
		if jb.succeeded {
			if _, err := s.UpdateJob(ctx, jb.id, finish); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		owner  string
		status string
		labels map[string]string
		want   string // "" = not found
	}{
		{"alice", "succeeded", main, "j2"},
		{"alice", "queued", main, "j3"},
		{"alice", "succeeded", nil, "j4"},
		{"alice", "succeeded", map[string]string{"branch": "dev", "x": "y"}, ""},
		{"bob", "succeeded", main, "j5"},
		{"", "succeeded", main, "j6"},
		{"carol", "succeeded", nil, ""},
	}
	for _, tt := range tests {
		j, err := s.LatestJob(ctx, tt.owner, job.Status(tt.status), tt.labels)
		switch {
		case tt.want == "" && !errors.Is(err, store.ErrNotFound):
			t.Errorf("LatestJob(%q, %s, %v) = %v, %v; want ErrNotFound", tt.owner, tt.status, tt.labels, j, err)
		case tt.want != "" && (err != nil || j.ID != tt.want):
			t.Errorf("LatestJob(%q, %s, %v) = %v, %v; want %s", tt.owner, tt.status, tt.labels, j, err, tt.want)
		}
	}
}

func finish(j *job.Job) error {
	if err := j.Transition(job.StatusRunning, base); err != nil {
		return err
	}
	return j.Transition(job.StatusSucceeded, base)
}
