package store_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// oomAfterListing is a client hook that runs the server out of memory
// right after the first transaction that lists a job (the one adding it
// to the all-jobs index), so the job's own write is refused: a creation
// cut in the middle by a Redis filling up.
type oomAfterListing struct {
	srv   *redistest.Server
	t     testing.TB
	fired atomic.Bool
}

func (h *oomAfterListing) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *oomAfterListing) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}

func (h *oomAfterListing) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if h.fired.Load() {
			return err
		}
		for _, c := range cmds {
			if c.Name() == "zadd" && len(c.Args()) > 1 && c.Args()[1] == store.AllIndexKey() {
				h.fired.Store(true)
				h.srv.RunOutOfMemory(h.t)
				break
			}
		}
		return err
	}
}

// orphanEntries lists the index entries, in every job index (the names
// hashes included), whose job does not exist.
func orphanEntries(t *testing.T, rdb *redis.Client) []string {
	t.Helper()
	ctx := t.Context()
	keys, err := rdb.Keys(ctx, store.AllIndexKey()+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, k := range keys {
		var members []string
		var err error
		switch typ, _ := rdb.Type(ctx, k).Result(); typ {
		case "zset":
			members, err = rdb.ZRange(ctx, k, 0, -1).Result()
		case "hash": // the names of the jobs of an owner
			members, err = rdb.HKeys(ctx, k).Result()
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			_, id, _ := strings.Cut(m, ":")
			if n, err := rdb.Exists(ctx, store.JobKey(id)).Result(); err != nil || n == 0 {
				orphans = append(orphans, k+" "+m)
			}
		}
	}
	return orphans
}

// TestCreationRefusedOutOfMemoryLeavesNoIndexEntry: Redis fills up
// between a creation's listing and its job write; the creation fails,
// the undo the API runs then (DiscardJob, still out of memory) removes
// the entries the listing added, and no index names a missing job.
func TestCreationRefusedOutOfMemoryLeavesNoIndexEntry(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	hook := &oomAfterListing{srv: srv, t: t}
	rdb.AddHook(hook)
	s := store.New(rdb, store.Options{Retention: testRetention})
	ctx := t.Context()
	kept := newJob(jobID(1), "key_a", 0, map[string]string{"env": "ci"})
	hook.fired.Store(true) // the first creation goes through
	mustCreate(t, s, kept)
	hook.fired.Store(false)

	j := newJob(jobID(2), "key_a", 1, map[string]string{"env": "ci"})
	if err := s.CreateJob(ctx, j); err == nil {
		t.Fatal("CreateJob with Redis out of memory after the listing = nil, want an error")
	}
	if err := s.DiscardJob(ctx, j); err != nil {
		t.Fatalf("DiscardJob out of memory = %v, want nil", err)
	}
	srv.RecoverMemory(t)
	if o := orphanEntries(t, rdb); len(o) > 0 {
		t.Errorf("index entries of missing jobs after the refused creation: %v", o)
	}
	jobs, _, err := s.ListJobs(ctx, store.ListFilter{Owner: "key_a", Limit: 10})
	if err != nil || len(jobs) != 1 || jobs[0].ID != kept.ID {
		t.Errorf("ListJobs = %d jobs, %v; want only %s", len(jobs), err, kept.ID)
	}
}
