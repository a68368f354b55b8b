package store_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// found is a change point as a job's end finds it: in series, at job,
// with near the jobs around it.
func found(series, at string, near ...string) job.ChangePoint {
	return job.ChangePoint{Series: series, Template: "checkout", Target: "a", Concurrency: 2, Metric: "p50_ms",
		JobID: at, Before: 20, After: 24, Magnitude: 0.2, PValue: 1e-5, DetectedAt: base, Near: append([]string{at}, near...)}
}

// TestRecordChangePoints: a change point keeps its id while later
// detections move it within its near jobs, is announced once however
// often it is found again, and a point of another series or far away is
// another point.
func TestRecordChangePoints(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	kept, fresh, err := s.RecordChangePoints(ctx, "key_a", "checkout", []job.ChangePoint{found("s1", "j10", "j8", "j9", "j11", "j12")}, false)
	if err != nil || len(kept) != 1 || len(fresh) != 0 || !job.ValidChangePointID(kept[0].ID) {
		t.Fatalf("first record (the API's, not announcing) = %+v, %+v, %v; want one kept with an id, none announced", kept, fresh, err)
	}
	id := kept[0].ID
	// A job's end finds it again, one job earlier: the same point, now announced.
	kept, fresh, err = s.RecordChangePoints(ctx, "key_a", "checkout", []job.ChangePoint{found("s1", "j9", "j7", "j8", "j10", "j11")}, true)
	if err != nil || len(kept) != 1 || kept[0].ID != id || kept[0].JobID != "j9" || len(fresh) != 1 || fresh[0].ID != id {
		t.Fatalf("second record = %+v, %+v, %v; want point %s moved to j9 and announced", kept, fresh, err, id)
	}
	// Later ends find it again and another series' point: only the new one is announced.
	for range 3 {
		kept, fresh, err = s.RecordChangePoints(ctx, "key_a", "checkout", []job.ChangePoint{found("s1", "j9", "j8", "j10"), found("s2", "j9", "j8", "j10")}, true)
		if err != nil || len(kept) != 2 || kept[0].ID != id || kept[1].ID == id {
			t.Fatalf("record = %+v, %v; want %s and a new point", kept, err, id)
		}
		if len(fresh) > 1 || len(fresh) == 1 && fresh[0].Series != "s2" {
			t.Fatalf("announced %+v, want at most s2's point", fresh)
		}
	}
	all, err := s.ChangePoints(ctx, "key_a", "checkout")
	if err != nil || len(all) != 2 {
		t.Fatalf("ChangePoints = %+v, %v; want 2", all, err)
	}
	if n, _ := s.ChangePoints(ctx, "key_b", "checkout"); len(n) != 0 {
		t.Errorf("another owner's template of the same name has %d change points, want 0", len(n))
	}
	ttl := rdb.PTTL(ctx, "benchq:changepoints:{key_a/checkout}").Val()
	if ttl <= 0 || ttl > testRetention {
		t.Errorf("TTL of the record = %v, want within the retention %v", ttl, testRetention)
	}
}

// TestRecordChangePointsAnnouncesOnceConcurrently: ten job ends finding
// the same point at once announce it once between them.
func TestRecordChangePointsAnnouncesOnceConcurrently(t *testing.T) {
	s, _ := newStore(t)
	var mu sync.Mutex
	announced := 0
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, fresh, err := s.RecordChangePoints(t.Context(), "key_a", "checkout", []job.ChangePoint{found("s1", "j9")}, true)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			announced += len(fresh)
			mu.Unlock()
		})
	}
	wg.Wait()
	if announced != 1 {
		t.Errorf("announced %d times, want once", announced)
	}
}

// TestChangePointsBounded: past MaxChangePoints the oldest found go.
func TestChangePointsBounded(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	var batch []job.ChangePoint
	for i := range store.MaxChangePoints + 10 {
		cp := found(fmt.Sprintf("s%03d", i), "j1")
		cp.DetectedAt = base.Add(time.Duration(i) * time.Second)
		batch = append(batch, cp)
		if len(batch) == 30 {
			if _, _, err := s.RecordChangePoints(ctx, "key_a", "checkout", batch, true); err != nil {
				t.Fatal(err)
			}
			batch = nil
		}
	}
	if _, _, err := s.RecordChangePoints(ctx, "key_a", "checkout", batch, true); err != nil {
		t.Fatal(err)
	}
	all, err := s.ChangePoints(ctx, "key_a", "checkout")
	if err != nil || len(all) != store.MaxChangePoints || all[0].Series != "s010" {
		t.Fatalf("kept %d, the oldest %q (%v); want %d, from s010", len(all), all[0].Series, err, store.MaxChangePoints)
	}
}

// TestAcknowledgeChangePoint: the owner's acknowledgement sticks with who
// and when; a caller who may not see the owner's points, and an unknown
// id, get ErrNotFound alike.
func TestAcknowledgeChangePoint(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	kept, _, err := s.RecordChangePoints(ctx, "key_a", "checkout", []job.ChangePoint{found("s1", "j9")}, true)
	if err != nil {
		t.Fatal(err)
	}
	id := kept[0].ID
	onlyA := func(owner string) bool { return owner == "key_a" }
	nobody := func(string) bool { return false }
	if _, err := s.AcknowledgeChangePoint(ctx, id, "key_b", base, nobody); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("acknowledge by another key = %v, want ErrNotFound", err)
	}
	if _, err := s.AcknowledgeChangePoint(ctx, job.NewChangePointID(), "key_a", base, onlyA); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("acknowledge of an unknown id = %v, want ErrNotFound", err)
	}
	cp, err := s.AcknowledgeChangePoint(ctx, id, "key_a", base, onlyA)
	if err != nil || !cp.Acknowledged || cp.AcknowledgedBy != "key_a" || cp.AcknowledgedAt == nil || !cp.AcknowledgedAt.Equal(base) {
		t.Fatalf("acknowledge = %+v, %v; want acknowledged by key_a at %v", cp, err, base)
	}
	again, err := s.AcknowledgeChangePoint(ctx, id, "key_admin", base.Add(time.Hour), func(string) bool { return true })
	if err != nil || again.AcknowledgedBy != "key_a" || !again.AcknowledgedAt.Equal(base) {
		t.Errorf("second acknowledge = %+v, %v; want the first kept", again, err)
	}
	// A later detection keeps the acknowledgement.
	kept, _, err = s.RecordChangePoints(ctx, "key_a", "checkout", []job.ChangePoint{found("s1", "j10", "j9")}, true)
	if err != nil || kept[0].ID != id || !kept[0].Acknowledged {
		t.Errorf("record after acknowledge = %+v, %v; want %s still acknowledged", kept, err, id)
	}
}
