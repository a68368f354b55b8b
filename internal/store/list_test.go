package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// ids lists the IDs of jobs, in order.
func ids(jobs []*job.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// pageAll follows cursors to the end, creating a newer job after each page
// when insert is set, to show inserts do not shift pages.
func pageAll(t *testing.T, s *store.Store, f store.ListFilter, insert func(page int)) []string {
	t.Helper()
	var all []string
	for page := 0; page < 50; page++ {
		jobs, next, err := s.ListJobs(t.Context(), f)
		if err != nil {
			t.Fatalf("ListJobs(page %d) = %v", page, err)
		}
		all = append(all, ids(jobs)...)
		if next == "" {
			return all
		}
		if insert != nil {
			insert(page)
		}
		f.Cursor = next
	}
	t.Fatal("ListJobs never returned an empty cursor")
	return nil
}

func TestListJobsPagesNewestFirstStableUnderInserts(t *testing.T) {
	s, _ := newStore(t)
	var want []string
	for i := range 25 {
		mustCreate(t, s, newJob(jobID(i), "", i, nil))
		want = append([]string{jobID(i)}, want...)
	}
	insert := func(page int) { mustCreate(t, s, newJob(jobID(100+page), "", 1000+page, nil)) }
	got := pageAll(t, s, store.ListFilter{Limit: 10}, insert)
	if !slices.Equal(got, want) {
		t.Errorf("pages of 10 = %v,\nwant %v (newest first, inserts never shift a page)", got, want)
	}
}

func TestListJobsFilters(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	mustCreate(t, s,
		newJob("a0", "alice", 0, map[string]string{"branch": "main", "env": "ci"}),
		newJob("a1", "alice", 1, map[string]string{"branch": "dev"}),
		newJob("b2", "bob", 2, map[string]string{"branch": "main"}),
		newJob("a3", "alice", 3, map[string]string{"branch": "main"}),
	)
	for _, id := range []string{"a0", "b2"} {
		if _, err := s.UpdateJob(ctx, id, func(j *job.Job) error { return j.Transition(job.StatusRunning, base) }); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		f    store.ListFilter
		want []string
	}{
		{"all", store.ListFilter{}, []string{"a3", "b2", "a1", "a0"}},
		{"owner", store.ListFilter{Owner: "alice"}, []string{"a3", "a1", "a0"}},
		{"status", store.ListFilter{Status: job.StatusRunning}, []string{"b2", "a0"}},
		{"status queued", store.ListFilter{Status: job.StatusQueued}, []string{"a3", "a1"}},
		{"owner+status", store.ListFilter{Owner: "alice", Status: job.StatusRunning}, []string{"a0"}},
		{"label", store.ListFilter{Labels: map[string]string{"branch": "main"}}, []string{"a3", "b2", "a0"}},
		{"two labels", store.ListFilter{Labels: map[string]string{"branch": "main", "env": "ci"}}, []string{"a0"}},
		{"label+owner paged", store.ListFilter{Owner: "alice", Labels: map[string]string{"branch": "main"}, Limit: 1}, []string{"a3", "a0"}},
		{"name part, any case", store.ListFilter{Name: "JOB A"}, []string{"a3", "a1", "a0"}},
		{"name+status", store.ListFilter{Name: "a", Status: job.StatusRunning}, []string{"a0"}},
		{"name no match", store.ListFilter{Name: "nightly"}, nil},
		{"no match", store.ListFilter{Owner: "carol"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pageAll(t, s, tt.f, nil); !slices.Equal(got, tt.want) {
				t.Errorf("ListJobs(%+v) = %v, want %v", tt.f, got, tt.want)
			}
		})
	}
}

// TestListJobsIndexEntries: a listing shows only entries that agree with
// their job, and drops only those no write in flight can still make agree.
// An index entry is written before its job (CreateJob) and before a status
// change (UpdateJob), and the old status's entry removed after, so a
// writer cut short leaves such entries behind.
func TestListJobsIndexEntries(t *testing.T) {
	ago := func(d time.Duration) func(*job.Job) {
		return func(j *job.Job) { j.CreatedAt = time.Now().Add(-d).UTC().Truncate(time.Millisecond) }
	}
	tests := []struct {
		name    string
		created func(*job.Job)
		// mess changes Redis behind the store's back, as a writer cut
		// short would leave it.
		mess      func(t *testing.T, rdb *redis.Client, j *job.Job)
		filter    store.ListFilter
		index     string
		listed    bool
		keptEntry bool
	}{
		{"job expired", ago(2 * time.Minute), func(t *testing.T, rdb *redis.Client, j *job.Job) {
			mustOK(t, rdb.Del(t.Context(), store.JobKey(j.ID)).Err())
		}, store.ListFilter{}, store.AllIndexKey(), false, false},
		{"job still being created", ago(time.Second), func(t *testing.T, rdb *redis.Client, j *job.Job) {
			mustOK(t, rdb.Del(t.Context(), store.JobKey(j.ID)).Err())
		}, store.ListFilter{}, store.AllIndexKey(), false, true},
		{"terminal job left in the running index", ago(time.Second), func(t *testing.T, rdb *redis.Client, j *job.Job) {
			j.Status = job.StatusSucceeded
			mustOK(t, rdb.HSet(t.Context(), store.JobKey(j.ID), "job", mustJSON(t, j)).Err())
			mustOK(t, rdb.ZAdd(t.Context(), store.StatusIndexKey(job.StatusRunning), redis.Z{Member: store.IndexMember(j)}).Err())
		}, store.ListFilter{Status: job.StatusRunning}, store.StatusIndexKey(job.StatusRunning), false, false},
		{"queued job about to start", ago(time.Second), func(t *testing.T, rdb *redis.Client, j *job.Job) {
			mustOK(t, rdb.ZAdd(t.Context(), store.StatusIndexKey(job.StatusRunning), redis.Z{Member: store.IndexMember(j)}).Err())
		}, store.ListFilter{Status: job.StatusRunning}, store.StatusIndexKey(job.StatusRunning), false, true},
		{"queued job in its index", ago(time.Second), func(*testing.T, *redis.Client, *job.Job) {},
			store.ListFilter{Status: job.StatusQueued}, store.StatusIndexKey(job.StatusQueued), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, rdb := newStore(t)
			j := newJob("j1", "", 0, nil)
			tt.created(j)
			mustCreate(t, s, j)
			tt.mess(t, rdb, j)
			got := pageAll(t, s, tt.filter, nil)
			if listed := slices.Contains(got, "j1"); listed != tt.listed {
				t.Errorf("ListJobs(%+v) = %v; listed %v, want %v", tt.filter, got, listed, tt.listed)
			}
			n, err := rdb.ZScore(t.Context(), tt.index, store.IndexMember(j)).Result()
			if kept := err == nil; kept != tt.keptEntry || n != 0 {
				t.Errorf("entry in %s after listing: kept %v (%v), want %v", tt.index, kept, err, tt.keptEntry)
			}
		})
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestListJobsBadCursor(t *testing.T) {
	s, _ := newStore(t)
	for _, c := range []string{"garbage!", "Zm9v" /* "foo" */} {
		if _, _, err := s.ListJobs(t.Context(), store.ListFilter{Cursor: c}); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("ListJobs(cursor %q) = %v, want ErrInvalidCursor", c, err)
		}
	}
}

func TestCountByStatus(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	// job-000 was created long before the retention window; the others now.
	for i := range 3 {
		j := newJob(jobID(i), "", 0, nil)
		j.CreatedAt = base.AddDate(-100, 0, 0) // far past the retention: not counted
		if i > 0 {
			j.CreatedAt = nowUTC()
		}
		mustCreate(t, s, j)
	}
	if _, err := s.UpdateJob(ctx, jobID(2), func(j *job.Job) error { return j.Transition(job.StatusCanceled, base) }); err != nil {
		t.Fatal(err)
	}
	got, err := s.CountByStatus(ctx)
	if err != nil {
		t.Fatalf("CountByStatus = %v", err)
	}
	want := map[job.Status]int64{job.StatusQueued: 1, job.StatusCanceled: 1, job.StatusRunning: 0, job.StatusSucceeded: 0, job.StatusFailed: 0}
	for st, n := range want {
		if got[st] != n {
			t.Errorf("CountByStatus()[%s] = %d, want %d", st, got[st], n)
		}
	}
}

// TestStatusChangesLeaveOneEntry: after a job's life through the status
// indexes (started, handed back, started again, finished) it is in the
// index of its status and in no other.
func TestStatusChangesLeaveOneEntry(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	j := newJob("j1", "", 0, nil)
	mustCreate(t, s, j)
	steps := []func(j *job.Job) error{
		func(j *job.Job) error { _, err := j.Start("w1", "", testBudget, nowUTC()); return err },
		func(j *job.Job) error { return j.TransitionAs(j.Attempt, job.StatusQueued, nowUTC()) },
		func(j *job.Job) error { _, err := j.Start("w2", "", testBudget, nowUTC()); return err },
		func(j *job.Job) error { return j.Finish(job.StatusSucceeded, "", nil, nowUTC()) },
	}
	for i, step := range steps {
		got, err := s.UpdateJob(ctx, j.ID, step)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		for _, st := range []job.Status{job.StatusQueued, job.StatusRunning, job.StatusSucceeded, job.StatusFailed, job.StatusCanceled} {
			_, err := rdb.ZScore(ctx, store.StatusIndexKey(st), store.IndexMember(j)).Result()
			if in := err == nil; in != (st == got.Status) {
				t.Errorf("step %d (job %s): in the %s index = %v", i, got.Status, st, in)
			}
		}
	}
}
