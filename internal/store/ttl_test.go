package store_test

import (
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// TestEveryKeyHasRetentionTTL writes every kind of key and checks that no
// benchq key would live forever.
func TestEveryKeyHasRetentionTTL(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	mustCreate(t, s, newJob("j1", "alice", 0, nil), newJob("j2", "", 1, nil))
	steps := []error{
		s.SetProgress(ctx, "j1", job.Progress{RunsDone: 1}),
		s.AppendEvent(ctx, "j1", job.EventProgress, job.Progress{}),
	}
	_, err := s.SaveRun(ctx, "j1", run(0, 0, 10))
	steps = append(steps, err)
	_, err = s.UpdateJob(ctx, "j1", func(j *job.Job) error { return j.Transition(job.StatusRunning, base) })
	steps = append(steps, err)
	_, err = s.UpdateJob(ctx, "j1", func(j *job.Job) error { j.CancelRequested = true; return nil }) // the cancel flag's key
	steps = append(steps, err)
	_, err = s.UpdateJob(ctx, "j2", func(j *job.Job) error { j.CancelRequested = true; return j.Transition(job.StatusCanceled, base) })
	steps = append(steps, err, s.AppendEvent(ctx, "j2", job.EventFinished, store.Finished{Status: job.StatusCanceled}))
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d = %v", i, err)
		}
	}
	keys, err := rdb.Keys(ctx, "benchq:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 12 { // 5 of j1, 3 of j2, all, 2 owners, 3 statuses
		t.Errorf("KEYS benchq:* = %v, want at least 12 (every kind written)", keys)
	}
	for _, k := range keys {
		ttl, err := rdb.TTL(ctx, k).Result()
		if err != nil || ttl <= testRetention-time.Minute || ttl > testRetention {
			t.Errorf("TTL %s = %v, %v; want about %v", k, ttl, err, testRetention)
		}
	}
}
