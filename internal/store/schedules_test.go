package store_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/store"
)

// TestClaimTickOnce: of 20 concurrent claims of one tick exactly one
// wins; an older tick is never claimed after a newer one.
func TestClaimTickOnce(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	tick := time.Date(2026, 3, 2, 12, 1, 0, 0, time.UTC)
	if _, err := s.StartSchedule(ctx, "key_a", "t", tick.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			ok, err := s.ClaimTick(ctx, "key_a", "t", tick)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d claims of one tick won, want 1", won.Load())
	}
	if ok, _ := s.ClaimTick(ctx, "key_a", "t", tick.Add(-30*time.Second)); ok {
		t.Error("an older tick was claimed after a newer one")
	}
	for i := range store.MaxScheduledRuns + 5 {
		if err := s.RecordScheduledRun(ctx, "key_a", "t", store.ScheduledRun{Tick: tick.Add(time.Duration(i) * time.Minute), JobID: "j"}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.GetScheduleState(ctx, "key_a", "t")
	if err != nil || !st.Tick.Equal(tick) || st.LastJob != "j" || len(st.Runs) != store.MaxScheduledRuns {
		t.Fatalf("state = %+v, %v; want tick %s, last job j, %d runs", st, err, tick, store.MaxScheduledRuns)
	}
}
