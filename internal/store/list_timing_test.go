package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// benchJobs is how many jobs BenchmarkListJobs100k stores, all of one
// key: the worst a tenant's own list can meet.
const benchJobs = 100_000

// benchJob is job i of the benchmark's tenant: mostly succeeded, 2 %
// failed, 1 % canceled, 20 queued and 5 running; one of 40 templates,
// on main or one of 200 branches.
func benchJob(i int) *job.Job {
	tpl := fmt.Sprintf("tpl-%d", i%40)
	branch := "main"
	if i%3 == 0 {
		branch = fmt.Sprintf("feature-%d", i%200)
	}
	j := newJob(fmt.Sprintf("bench-%06d", i), "key_bench", i, map[string]string{"template": tpl, "branch": branch})
	j.Spec.Name = fmt.Sprintf("nightly %s #%d", tpl, i)
	switch {
	case i%20_000 == 7:
		j.Status = job.StatusRunning
	case i%5_000 == 3:
		j.Status = job.StatusQueued
	case i%50 == 1:
		j.Status = job.StatusFailed
	case i%100 == 2:
		j.Status = job.StatusCanceled
	default:
		j.Status = job.StatusSucceeded
	}
	return j
}

// BenchmarkListJobs100k times one page (20 jobs, the API's default) of a
// tenant's filtered job list over 100 000 stored jobs on a real
// redis-server, and reports each filter's p99 besides the mean.
func BenchmarkListJobs100k(b *testing.B) {
	rdb := redistest.Start(b).Client(b)
	s := store.New(rdb, store.Options{Retention: 24 * 365 * time.Hour})
	jobs := make([]*job.Job, benchJobs)
	for i := range jobs {
		jobs[i] = benchJob(i)
	}
	start := time.Now()
	if err := s.CreateJobsPipelined(b.Context(), jobs); err != nil {
		b.Fatal(err)
	}
	b.Logf("stored %d jobs in %s", benchJobs, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if n, err := s.BackfillIndexes(b.Context()); err != nil {
		b.Fatal(err)
	} else {
		b.Logf("backfilled %d jobs in %s", n, time.Since(start).Round(time.Millisecond))
	}
	for _, tc := range []struct {
		name string
		f    store.ListFilter
	}{
		{"unfiltered", store.ListFilter{}},
		{"status=failed", store.ListFilter{Status: job.StatusFailed}},
		{"status=running", store.ListFilter{Status: job.StatusRunning}},
		{"label=template:tpl-7", store.ListFilter{Labels: map[string]string{"template": "tpl-7"}}},
		{"status=succeeded,template,branch", store.ListFilter{Status: job.StatusSucceeded, Labels: map[string]string{"template": "tpl-7", "branch": "feature-7"}}},
		{"name=#4242", store.ListFilter{Name: "#4242"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			f := tc.f
			f.Owner, f.Limit = "key_bench", 20
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				if _, _, err := s.ListJobs(b.Context(), f); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
