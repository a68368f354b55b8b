package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// TestPinnedBaselineOutlivesRetention runs with a retention of a second
// and a half on a real redis-server, with real expiry: the neighbours of
// a pinned job expire, the pinned one and its runs stay and a compare_to
// selector still finds it, also after the index trim of later jobs; the
// latest succeeded job of a template on a branch is kept until a newer
// one succeeds; an unpinned job gets its TTL back.
func TestPinnedBaselineOutlivesRetention(t *testing.T) {
	const retention = 1500 * time.Millisecond
	rdb := redistest.Start(t).Client(t)
	s := store.New(rdb, store.Options{Retention: retention})
	ctx := t.Context()
	now := time.Now().UTC()
	mk := func(id string, sec int, labels map[string]string) *job.Job {
		j := newJob(id, "alice", 0, labels)
		j.CreatedAt = now.Add(time.Duration(sec) * time.Millisecond)
		mustCreate(t, s, j)
		if _, err := s.SaveRun(ctx, id, run(0, 0, 10)); err != nil {
			t.Fatal(err)
		}
		succeed(t, s, id)
		return j
	}
	ci := map[string]string{"env": "ci"}
	mk("neighbour-old", 0, ci)
	mk("baseline", 1, ci)
	mk("neighbour-new", 2, ci)
	tplA := map[string]string{"template": "shop", "branch": "main"}
	mk("tpl-1", 3, tplA)
	mk("tpl-2", 4, tplA) // replaces tpl-1 as the latest on main
	if j, err := s.PinJob(ctx, "baseline", true); err != nil || !j.Pinned {
		t.Fatalf("PinJob = %+v, %v; want pinned", j, err)
	}
	mk("pin-then-unpin", 5, nil)
	if _, err := s.PinJob(ctx, "pin-then-unpin", true); err != nil {
		t.Fatal(err)
	}
	// A write to a kept job (an event, as a finished job's webhook
	// writes) must not give it a TTL again.
	if err := s.AppendEvent(ctx, "baseline", job.EventFinished, store.Finished{Status: job.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PinJob(ctx, "pin-then-unpin", false); err != nil {
		t.Fatal(err)
	}

	// Bounded wait for the neighbours' real expiry.
	deadline := time.Now().Add(10 * retention)
	for {
		_, e1 := s.GetJob(ctx, "neighbour-old")
		_, e2 := s.GetJob(ctx, "neighbour-new")
		_, e3 := s.GetJob(ctx, "pin-then-unpin")
		_, e4 := s.GetJob(ctx, "tpl-1")
		if errors.Is(e1, store.ErrNotFound) && errors.Is(e2, store.ErrNotFound) && errors.Is(e3, store.ErrNotFound) && errors.Is(e4, store.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: neighbour-old %v, neighbour-new %v, pin-then-unpin %v, tpl-1 %v; want all expired", 10*retention, e1, e2, e3, e4)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Past twice the retention, a new job's creation trims the indexes.
	time.Sleep(2*retention + 100*time.Millisecond)
	mustCreate(t, s, newJob("later", "alice", 0, nil))

	tests := []struct {
		id   string
		kept []string
	}{
		{"baseline", []string{"pin"}},
		{"tpl-2", []string{"latest"}},
	}
	for _, tt := range tests {
		j, err := s.GetJob(ctx, tt.id)
		if err != nil {
			t.Fatalf("GetJob(%s) past the retention = %v, want the kept job", tt.id, err)
		}
		if runs, err := s.Runs(ctx, tt.id); err != nil || len(runs) != 1 {
			t.Errorf("Runs(%s) = %d, %v; want its run", tt.id, len(runs), err)
		}
		if ttl := rdb.TTL(ctx, "benchq:job:{"+tt.id+"}").Val(); ttl != -1 {
			t.Errorf("TTL of %s's hash = %v, want none", tt.id, ttl)
		}
		if why, err := s.Kept(ctx, tt.id); err != nil || len(why) != 1 || why[0] != tt.kept[0] {
			t.Errorf("Kept(%s) = %v, %v; want %v", tt.id, why, err, tt.kept)
		}
		if tt.id == "baseline" && !j.Pinned {
			t.Error("baseline is not shown pinned")
		}
	}
	got, err := s.LatestJob(ctx, "alice", job.StatusSucceeded, ci)
	if err != nil || got.ID != "baseline" {
		t.Fatalf("compare_to selector {env: ci} = %v, %v; want the pinned baseline", got, err)
	}
	if got, err := s.LatestJob(ctx, "alice", job.StatusSucceeded, tplA); err != nil || got.ID != "tpl-2" {
		t.Fatalf("selector of the template's main = %v, %v; want tpl-2", got, err)
	}
	// Unpinned, the baseline expires like any job, a retention later.
	if _, err := s.PinJob(ctx, "baseline", false); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, "benchq:job:{baseline}").Val(); ttl <= 0 || ttl > retention {
		t.Errorf("TTL after unpin = %v, want (0, %v]", ttl, retention)
	}
}

// succeed finishes job id through UpdateJob, as a worker's end does.
func succeed(t *testing.T, s *store.Store, id string) {
	t.Helper()
	_, err := s.UpdateJob(t.Context(), id, finish)
	if err != nil {
		t.Fatalf("finish %s: %v", id, err)
	}
}
