package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// TestEnqueueClassifiesOutages enqueues on a real redis-server out of
// memory and killed. The first enqueue publishes the queue; asynq then
// reports a failure as the flattened text of its script's error, which
// must classify as the store's errors do.
func TestEnqueueClassifiesOutages(t *testing.T) {
	srv := redistest.Start(t)
	client := asynq.NewClientFromRedisClient(srv.Client(t))
	ctx := t.Context()
	task := func(id string) *asynq.Task {
		tk, err := queue.NewJobRunTask(id, 0)
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	if _, err := queue.Enqueue(ctx, client, task("j0")); err != nil {
		t.Fatalf("Enqueue = %v", err)
	}
	for _, tc := range []struct {
		name         string
		want         store.Condition
		enter, leave func(testing.TB)
	}{
		{"out of memory", store.RefusingWrites, srv.RunOutOfMemory, srv.RecoverMemory},
		{"killed", store.Unreachable, func(testing.TB) { srv.Kill() }, srv.Restart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.enter(t)
			_, err := queue.Enqueue(ctx, client, task("j-"+tc.name))
			if cond, ok := store.ConditionOf(err); !ok || cond != tc.want || !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("Enqueue while %s = %v, want ErrUnavailable %q", tc.name, err, tc.want)
			}
			tc.leave(t)
		})
	}
	// Recovered, with the same client: go-redis redials within about a
	// second of the restart.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := queue.Enqueue(ctx, client, task("j1"))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Enqueue after restart still fails: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A refusal that is no outage stays unclassified.
	_, err := queue.Enqueue(ctx, client, task("j1"))
	if !errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("second Enqueue of j1 = %v, want ErrTaskIDConflict, not ErrUnavailable", err)
	}
}
