package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// testRetention differs from the default so TTL checks see the option.
const testRetention = 2 * time.Hour

func newStore(t *testing.T) (*store.Store, *redis.Client) {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	return store.New(rdb, store.Options{Retention: testRetention}), rdb
}

// base is the creation time of the first test job; tests add seconds so
// creation order is explicit.
var base = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// newJob returns a queued job created sec seconds after base.
func newJob(id, owner string, sec int, labels map[string]string) *job.Job {
	spec := job.Spec{
		Name:    "job " + id,
		Labels:  labels,
		Targets: []job.Target{{Name: "a", URL: "http://127.0.0.1:1/"}},
		Sweep:   job.Sweep{Concurrency: []int{1, 4}, Requests: []int{10}, Repeats: 2},
	}
	j := job.New(id, owner, spec, base.Add(time.Duration(sec)*time.Second))
	return j
}

func mustCreate(t testing.TB, s *store.Store, jobs ...*job.Job) {
	t.Helper()
	for _, j := range jobs {
		if err := s.CreateJob(t.Context(), j); err != nil {
			t.Fatalf("CreateJob(%s) = %v, want nil", j.ID, err)
		}
	}
}

func jobID(i int) string { return fmt.Sprintf("job-%03d", i) }

func nowUTC() time.Time { return time.Now().UTC() }
