package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

func TestTaggedName(t *testing.T) {
	tests := []struct {
		old, want string
		ok        bool
	}{
		{"benchq:job:01ABC", "benchq:job:{01ABC}", true},
		{"benchq:job:01ABC:runs", "benchq:job:{01ABC}:runs", true},
		{"benchq:job:01ABC:delivery:2:attempts", "benchq:job:{01ABC}:delivery:2:attempts", true},
		{"benchq:jobs", "benchq:{jobs}", true},
		{"benchq:jobs:status:running", "benchq:{jobs}:status:running", true},
		{"benchq:jobs:owner:key_1", "benchq:{jobs}:owner:key_1", true},
		{"benchq:apikey:key_1", "benchq:{apikeys}:key:key_1", true},
		{"benchq:apikeys", "benchq:{apikeys}", true},
		{"benchq:apikeys:active", "benchq:{apikeys}:active", true},
		{"benchq:apikeys:hash:ab12", "benchq:{apikeys}:hash:ab12", true},
		// Already tagged, or never renamed.
		{"benchq:job:{01ABC}:runs", "", false},
		{"benchq:{jobs}", "", false},
		{"benchq:quota:active:key_1", "", false},
		{"benchq:idempotency:ab12", "", false},
		{"benchq:targets:owner:key_1", "", false},
		{"benchq:probe", "", false},
		{"benchq:job:", "", false},
		{"asynq:{jobs}:pending", "", false},
	}
	for _, tt := range tests {
		got, ok := store.TaggedName(tt.old)
		if got != tt.want || ok != tt.ok {
			t.Errorf("TaggedName(%q) = %q, %v; want %q, %v", tt.old, got, ok, tt.want, tt.ok)
		}
	}
}

// TestMigrateKeys writes a job and an API key the way the store did
// before hash tags, as an all-in-one's append-only file keeps them: after
// MigrateKeys the store reads both, TTLs kept, and later calls rename
// nothing, with or without the mark of the first.
func TestMigrateKeys(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	j := newJob("01OLD", "key_1", 0, nil)
	j.Status = job.StatusSucceeded
	member := store.IndexMember(j)
	key, plain, err := apikey.New("ci", false, apikey.Quota{}, "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	jobJSON, _ := json.Marshal(j)
	keyJSON, _ := json.Marshal(key)
	runJSON, _ := json.Marshal(job.Run{Target: "a"})
	old := func(p redis.Pipeliner) error {
		p.HSet(ctx, "benchq:job:01OLD", "job", jobJSON, "owner", "key_1")
		p.Expire(ctx, "benchq:job:01OLD", time.Hour)
		p.HSet(ctx, "benchq:job:01OLD:runs", "0:0", runJSON)
		for _, idx := range []string{"benchq:jobs", "benchq:jobs:owner:key_1", "benchq:jobs:status:succeeded"} {
			p.ZAdd(ctx, idx, redis.Z{Member: member})
		}
		p.Set(ctx, "benchq:apikey:"+key.ID, keyJSON, 0)
		p.Set(ctx, "benchq:apikeys:hash:"+key.Hash, key.ID, 0)
		p.SAdd(ctx, "benchq:apikeys", key.ID)
		p.SAdd(ctx, "benchq:apikeys:active", key.ID)
		return nil
	}
	if _, err := rdb.Pipelined(ctx, old); err != nil {
		t.Fatal(err)
	}
	n, err := s.MigrateKeys(ctx)
	if err != nil || n != 9 {
		t.Fatalf("MigrateKeys = %d, %v; want 9 keys renamed", n, err)
	}
	if got, err := s.GetJob(ctx, j.ID); err != nil || got.Status != job.StatusSucceeded {
		t.Errorf("GetJob after migration = %v, %v", got, err)
	}
	if ttl := rdb.TTL(ctx, store.JobKey(j.ID)).Val(); ttl <= 0 || ttl > time.Hour {
		t.Errorf("job TTL after migration = %v, want the hour it had", ttl)
	}
	if runs, err := s.Runs(ctx, j.ID); err != nil || len(runs) != 1 {
		t.Errorf("Runs after migration = %v, %v; want 1", runs, err)
	}
	if got, _, err := s.ListJobs(ctx, store.ListFilter{Owner: "key_1", Status: job.StatusSucceeded}); err != nil || len(got) != 1 {
		t.Errorf("ListJobs after migration = %v, %v; want the job", ids(got), err)
	}
	if got, err := s.KeyByHash(ctx, apikey.Hash(plain)); err != nil || got.ID != key.ID {
		t.Errorf("KeyByHash after migration = %v, %v; want %s", got.ID, err, key.ID)
	}
	if n, err := s.ActiveKeyCount(ctx); err != nil || n != 1 {
		t.Errorf("ActiveKeyCount after migration = %d, %v; want 1", n, err)
	}
	if n, err := s.MigrateKeys(ctx); err != nil || n != 0 {
		t.Errorf("second MigrateKeys = %d, %v; want 0", n, err)
	}
	if err := rdb.Del(ctx, "benchq:layout").Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.MigrateKeys(ctx); err != nil || n != 0 {
		t.Errorf("MigrateKeys without the mark = %d, %v; want 0 (nothing of the old layout left)", n, err)
	}
}
