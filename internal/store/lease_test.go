package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// testBudget is the crash budget the store tests start jobs under.
var testBudget = job.CrashBudget{Stalled: 3, Total: 10}

// TestLease: one holder at a time; only the holder renews or releases;
// the lease runs out by itself.
func TestLease(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	mustCreate(t, s, newJob("j1", "", 0, nil))
	steps := []struct {
		name string
		do   func() (bool, error)
		want bool
	}{
		{"a takes it", func() (bool, error) { return s.AcquireLease(ctx, "j1", "a", time.Minute) }, true},
		{"b cannot take it", func() (bool, error) { return s.AcquireLease(ctx, "j1", "b", time.Minute) }, false},
		{"b cannot renew it", func() (bool, error) { return s.RenewLease(ctx, "j1", "b", time.Minute) }, false},
		{"a renews it", func() (bool, error) { return s.RenewLease(ctx, "j1", "a", 2*time.Minute) }, true},
		{"b's release leaves it", func() (bool, error) {
			err := s.ReleaseLease(ctx, "j1", "b")
			h, _ := s.LeaseHolder(ctx, "j1")
			return h == "a", err
		}, true},
		{"a releases it", func() (bool, error) {
			err := s.ReleaseLease(ctx, "j1", "a")
			h, _ := s.LeaseHolder(ctx, "j1")
			return h == "", err
		}, true},
		{"a cannot renew a released lease", func() (bool, error) { return s.RenewLease(ctx, "j1", "a", time.Minute) }, false},
		{"b takes it then", func() (bool, error) { return s.AcquireLease(ctx, "j1", "b", 100*time.Millisecond) }, true},
		{"it runs out", func() (bool, error) {
			time.Sleep(200 * time.Millisecond)
			return s.AcquireLease(ctx, "j1", "c", time.Minute)
		}, true},
	}
	for _, st := range steps {
		got, err := st.do()
		if err != nil || got != st.want {
			t.Fatalf("%s: %v, %v; want %v", st.name, got, err, st.want)
		}
	}
	if ttl := rdb.PTTL(ctx, store.LeaseKey("j1")).Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("lease TTL = %v, want the holder's minute", ttl)
	}
}

// TestUnleasedRunning lists the running jobs no lease holds, and forgets
// the index entries of jobs that expired.
func TestUnleasedRunning(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	for i := range 4 {
		j := newJob(jobID(i), "", i, nil)
		j.CreatedAt = time.Now().Add(time.Duration(i-10) * time.Minute).UTC() // past indexGrace
		mustCreate(t, s, j)
	}
	for _, id := range []string{jobID(0), jobID(1), jobID(2)} {
		if _, err := s.UpdateJob(ctx, id, func(j *job.Job) error {
			_, err := j.Start("w", "", testBudget, nowUTC())
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := s.AcquireLease(ctx, jobID(1), "w", time.Minute); !ok || err != nil {
		t.Fatalf("AcquireLease = %v, %v", ok, err)
	}
	if err := rdb.Del(ctx, store.JobKey(jobID(2))).Err(); err != nil { // expired
		t.Fatal(err)
	}
	got, err := s.UnleasedRunning(ctx, 10)
	if err != nil || !slices.Equal(got, []string{jobID(0)}) {
		t.Fatalf("UnleasedRunning = %v, %v; want only %s (1 is leased, 2 expired, 3 queued)", got, err, jobID(0))
	}
	if n := rdb.ZCard(ctx, store.StatusIndexKey(job.StatusRunning)).Val(); n != 2 {
		t.Errorf("running index has %d entries, want 2: the expired job's dropped", n)
	}
}
