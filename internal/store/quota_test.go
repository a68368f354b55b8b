package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// TestReserveActiveExactUnderConcurrency races 10 admissions for 3 slots,
// on redis-server and on miniredis (the all-in-one mode's Redis).
func TestReserveActiveExactUnderConcurrency(t *testing.T) {
	real, _ := newStore(t)
	mini := store.New(redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()}), store.Options{})
	for name, s := range map[string]*store.Store{"redis-server": real, "miniredis": mini} {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			admitted := make(chan string, 10)
			for i := range 10 {
				wg.Go(func() {
					slot, err := s.ReserveActive(t.Context(), "key_a", jobID(i), 3)
					if err != nil {
						t.Errorf("ReserveActive: %v", err)
					}
					if slot.Admitted {
						admitted <- jobID(i)
					} else if slot.Count != 3 {
						t.Errorf("refused slot count = %d, want 3", slot.Count)
					}
				})
			}
			wg.Wait()
			close(admitted)
			if n := len(admitted); n != 3 {
				t.Fatalf("%d of 10 concurrent admissions with limit 3 got in, want exactly 3", n)
			}
			if n, _ := s.ActiveJobs(t.Context(), "key_b"); n != 0 {
				t.Errorf("another owner's active jobs = %d, want 0", n)
			}
		})
	}
}

// TestFinishingReleasesSlot checks the slot goes back exactly when a job
// reaches a terminal status, and not on other updates.
func TestFinishingReleasesSlot(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	j := newJob(jobID(1), "key_a", 0, nil)
	if slot, err := s.ReserveActive(ctx, "key_a", j.ID, 1); err != nil || !slot.Admitted {
		t.Fatalf("ReserveActive = %+v, %v, want admitted", slot, err)
	}
	mustCreate(t, s, j)
	if _, err := s.UpdateJob(ctx, j.ID, func(j *job.Job) error { return j.Transition(job.StatusRunning, nowUTC()) }); err != nil {
		t.Fatal(err)
	}
	if slot, _ := s.ReserveActive(ctx, "key_a", jobID(2), 1); slot.Admitted || slot.Count != 1 {
		t.Fatalf("ReserveActive while the job runs = %+v, want refused at 1", slot)
	}
	if _, err := s.UpdateJob(ctx, j.ID, func(j *job.Job) error { return j.Transition(job.StatusSucceeded, nowUTC()) }); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.ActiveJobs(ctx, "key_a"); n != 0 {
		t.Errorf("active jobs after success = %d, want 0", n)
	}
	if slot, _ := s.ReserveActive(ctx, "key_a", jobID(2), 1); !slot.Admitted {
		t.Errorf("ReserveActive after the job ended = %+v, want admitted", slot)
	}
}

// TestReserveActiveReclaimsLeaks: a slot whose job never got stored (past
// the grace period) or already finished is reclaimed when the owner is at
// its limit; a fresh admission without a job yet is not.
func TestReserveActiveReclaimsLeaks(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	// The layout of keys.go: an admission 2 minutes old with no job.
	old := float64(time.Now().Add(-2 * time.Minute).UnixMilli())
	rdb.ZAdd(ctx, "benchq:quota:active:key_a", redis.Z{Score: old, Member: "never-stored"})
	if slot, err := s.ReserveActive(ctx, "key_a", "fresh", 1); err != nil || !slot.Admitted {
		t.Fatalf("ReserveActive over a leaked slot = %+v, %v, want admitted", slot, err)
	}
	if slot, _ := s.ReserveActive(ctx, "key_a", "third", 1); slot.Admitted {
		t.Errorf("ReserveActive = admitted, want refused: the fresh admission is within its grace period")
	}
	if err := s.ReleaseActive(ctx, "key_a", "fresh"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.ActiveJobs(ctx, "key_a"); n != 0 {
		t.Errorf("active jobs after ReleaseActive = %d, want 0", n)
	}
}

func TestAllowSubmission(t *testing.T) {
	real, _ := newStore(t)
	mini := store.New(redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()}), store.Options{})
	for name, s := range map[string]*store.Store{"redis-server": real, "miniredis": mini} {
		t.Run(name, func(t *testing.T) {
			for i := range 5 {
				if v, err := s.AllowSubmission(t.Context(), "key_a", 5); err != nil || !v.Allowed {
					t.Fatalf("submission %d = %+v, %v, want allowed", i+1, v, err)
				}
			}
			v, err := s.AllowSubmission(t.Context(), "key_a", 5)
			if err != nil || v.Allowed || v.RetryAfter <= 0 || v.RetryAfter > 12*time.Second {
				t.Errorf("6th submission = %+v, %v, want refused with RetryAfter in (0, 12s]", v, err)
			}
			if v, _ := s.AllowSubmission(t.Context(), "key_b", 5); !v.Allowed {
				t.Errorf("another owner's first submission refused, want its own budget")
			}
		})
	}
}
