package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

func TestEventsReadInOrderAndResume(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	mustCreate(t, s, newJob("j1", "", 0, nil))
	types := []string{job.EventStarted, job.EventProgress, job.EventRunFinished}
	for i, typ := range types {
		if err := s.AppendEvent(ctx, "j1", typ, map[string]int{"n": i}); err != nil {
			t.Fatalf("AppendEvent(%s) = %v", typ, err)
		}
	}
	got, err := s.ReadEvents(ctx, "j1", "", 0)
	if err != nil || len(got) != 3 {
		t.Fatalf("ReadEvents(from start) = %d events, %v; want 3", len(got), err)
	}
	for i, ev := range got {
		var data struct{ N int }
		if err := json.Unmarshal(ev.Data, &data); err != nil || ev.Type != types[i] || data.N != i || ev.Time.IsZero() {
			t.Errorf("event %d = %s %s at %v, want %s {\"n\":%d} with a time", i, ev.Type, ev.Data, ev.Time, types[i], i)
		}
	}
	rest, err := s.ReadEvents(ctx, "j1", got[0].ID, 0)
	if err != nil || len(rest) != 2 || rest[0].ID != got[1].ID {
		t.Errorf("ReadEvents(after first) = %+v, %v; want the last two", rest, err)
	}
	none, err := s.ReadEvents(ctx, "j1", got[2].ID, 0)
	if err != nil || len(none) != 0 {
		t.Errorf("ReadEvents(after last, no wait) = %+v, %v; want none", none, err)
	}
}

// TestReadEventsBlocksForNewEvent waits on an empty stream while another
// goroutine appends: the read must return that event, not time out.
func TestReadEventsBlocksForNewEvent(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	mustCreate(t, s, newJob("j1", "", 0, nil))
	appended := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		appended <- s.AppendEvent(ctx, "j1", job.EventFinished, store.Finished{Status: "succeeded"})
	}()
	got, err := s.ReadEvents(ctx, "j1", "0", 10*time.Second)
	if err != nil || len(got) != 1 || got[0].Type != job.EventFinished {
		t.Fatalf("ReadEvents(block 10s) = %+v, %v; want the job.finished event appended meanwhile", got, err)
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
}

func TestReadEventsBadID(t *testing.T) {
	s, _ := newStore(t)
	for _, id := range []string{"abc", "1-x", "-1", "1-2-3"} {
		if _, err := s.ReadEvents(t.Context(), "j1", id, 0); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("ReadEvents(after %q) = %v, want ErrInvalidCursor", id, err)
		}
	}
}
