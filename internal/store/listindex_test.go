package store_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// jobLoads counts the job hashes a client reads (HMGET of a job key).
type jobLoads struct{ n atomic.Int64 }

func (h *jobLoads) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *jobLoads) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error { h.count(c); return next(ctx, c) }
}

func (h *jobLoads) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}

func (h *jobLoads) count(c redis.Cmder) {
	if a := c.Args(); c.Name() == "hmget" && len(a) > 1 {
		if k, ok := a[1].(string); ok && strings.HasPrefix(k, "benchq:job:") {
			h.n.Add(1)
		}
	}
}

// TestFilteredListLoadsAboutAPage: a page of a key's jobs filtered by
// status, label or name loads about as many jobs as it shows, however
// many of the key's jobs do not match: the owner's status, label and
// name indexes are walked or checked instead of every job being read.
func TestFilteredListLoadsAboutAPage(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	loads := &jobLoads{}
	rdb.AddHook(loads)
	s := store.New(rdb, store.Options{Retention: testRetention})
	ctx := t.Context()
	var jobs []*job.Job
	for i := range 3000 {
		labels := map[string]string{"template": "common"}
		j := newJob(jobID(i), "key_a", i, labels)
		j.Status = job.StatusSucceeded
		if i%300 == 0 { // 10 failed, the newest 299 jobs all succeeded
			j.Status = job.StatusFailed
			labels["template"] = "rare"
		}
		jobs = append(jobs, j)
	}
	if err := s.CreateJobsPipelined(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.BackfillIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	const limit = 5
	for _, tc := range []struct {
		f    store.ListFilter
		want int
	}{
		{store.ListFilter{Status: job.StatusFailed}, 10},
		{store.ListFilter{Labels: map[string]string{"template": "rare"}}, 10},
		{store.ListFilter{Status: job.StatusFailed, Labels: map[string]string{"template": "rare"}}, 10},
		{store.ListFilter{Status: job.StatusSucceeded, Labels: map[string]string{"template": "rare"}}, 0},
		{store.ListFilter{Name: "JOB-600"}, 1},
		{store.ListFilter{Name: "job-600", Status: job.StatusFailed}, 1},
	} {
		f, want := tc.f, tc.want
		f.Owner, f.Limit = "key_a", limit
		var got []string
		before := loads.n.Load()
		for page := 0; ; page++ {
			js, next, err := s.ListJobs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ids(js)...)
			if next == "" || page > 10 {
				break
			}
			f.Cursor = next
		}
		n := loads.n.Load() - before
		if len(got) != want {
			t.Errorf("ListJobs(status %q, labels %v, name %q) listed %d jobs, want %d", f.Status, f.Labels, f.Name, len(got), want)
		}
		if n > int64(want+limit) {
			t.Errorf("ListJobs(status %q, labels %v, name %q) loaded %d jobs to list %d of 3000, want at most %d", f.Status, f.Labels, f.Name, n, len(got), want+limit)
		}
	}
}

// TestBackfillIndexes: jobs stored before the owners' status and label
// indexes existed are listed by every filter before the backfill (the
// old walk) and after it (the new indexes), and a store that starts
// later finds the backfill done.
func TestBackfillIndexes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := store.New(rdb, store.Options{Retention: testRetention})
	ctx := t.Context()
	for i := range 30 {
		j := newJob(jobID(i), "key_a", i, map[string]string{"branch": []string{"main", "dev"}[i%2]})
		mustCreate(t, s, j)
		if i%3 == 0 {
			if _, err := s.UpdateJob(ctx, j.ID, func(j *job.Job) error { return j.Transition(job.StatusRunning, nowUTC()) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	// What an older benchq left: none of the new indexes, no mark.
	old, err := rdb.Keys(ctx, store.AllIndexKey()+":owner:key_a:*").Result()
	if err != nil || len(old) == 0 {
		t.Fatalf("owner status and label indexes = %v, %v; want some to delete", old, err)
	}
	mustOK(t, rdb.Del(ctx, append(old, store.IndexVersionKey())...).Err())

	filters := []store.ListFilter{
		{Owner: "key_a", Status: job.StatusRunning, Limit: 3},
		{Owner: "key_a", Labels: map[string]string{"branch": "main"}, Limit: 4},
		{Owner: "key_a", Status: job.StatusQueued, Labels: map[string]string{"branch": "dev"}, Limit: 2},
		{Owner: "key_a", Name: "JOB-01", Limit: 3},
	}
	wants := make([][]string, len(filters))
	fresh := store.New(rdb, store.Options{Retention: testRetention})
	for i, f := range filters {
		wants[i] = pageAll(t, fresh, f, nil)
		if len(wants[i]) < 5 {
			t.Fatalf("before the backfill ListJobs(%+v) = %v, want the old jobs listed", f, wants[i])
		}
	}
	n, err := fresh.BackfillIndexes(ctx)
	if err != nil || n != 30 {
		t.Fatalf("BackfillIndexes = %d, %v; want 30 jobs", n, err)
	}
	if v, err := rdb.Get(ctx, store.IndexVersionKey()).Result(); err != nil || v == "" {
		t.Errorf("backfill mark = %q, %v; want it set", v, err)
	}
	running, err := rdb.ZCard(ctx, store.OwnerStatusIndexKey("key_a", job.StatusRunning)).Result()
	if err != nil || running != 10 {
		t.Errorf("running index of key_a = %d entries, %v; want 10", running, err)
	}
	later := store.New(rdb, store.Options{Retention: testRetention})
	if n, err := later.BackfillIndexes(ctx); err != nil || n != 0 {
		t.Errorf("second BackfillIndexes = %d, %v; want nothing to do", n, err)
	}
	for i, f := range filters {
		if got := pageAll(t, later, f, nil); !slices.Equal(got, wants[i]) {
			t.Errorf("after the backfill ListJobs(%+v) = %v, want %v", f, got, wants[i])
		}
	}
}

// TestGoneJobLeavesTheOwnersIndexes: a listing through the owner's
// indexes that meets the entries of a job that expired (or was never
// stored) drops them from every index of the owner the filter names, its
// name included, and lists the rest.
func TestGoneJobLeavesTheOwnersIndexes(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	if _, err := s.BackfillIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"env": "ci"}
	gone := newJob("gone", "key_a", 0, labels)
	gone.CreatedAt = time.Now().Add(-2 * time.Minute).UTC().Truncate(time.Millisecond)
	kept := newJob("kept", "key_a", 0, labels)
	kept.CreatedAt = gone.CreatedAt.Add(-time.Second)
	mustCreate(t, s, gone, kept)
	mustOK(t, rdb.Del(ctx, store.JobKey(gone.ID)).Err())
	f := store.ListFilter{Owner: "key_a", Status: job.StatusQueued, Labels: labels, Name: "JOB"}
	if got := pageAll(t, s, f, nil); !slices.Equal(got, []string{kept.ID}) {
		t.Errorf("ListJobs(%+v) = %v, want only %s", f, got, kept.ID)
	}
	if o := orphanEntries(t, rdb); len(o) > 0 {
		t.Errorf("entries of the gone job left after the listing: %v", o)
	}
}
