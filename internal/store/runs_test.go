package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

func run(point, repeat int, complete int64) *job.Run {
	return &job.Run{
		RunKey:      job.RunKey{Point: point, Repeat: repeat},
		Target:      "a",
		Concurrency: 4,
		StartedAt:   base,
		FinishedAt:  base.Add(time.Second),
		Result:      &abreport.Report{CompleteRequests: complete, ConcurrencyLevel: 4, StatusCodes: map[int]int64{200: complete}},
	}
}

func TestSaveRunIsIdempotentPerKey(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	mustCreate(t, s, newJob("j1", "", 0, nil))
	saves := []struct {
		run  *job.Run
		want bool
	}{
		{run(1, 0, 100), true},
		{run(0, 1, 100), true},
		{run(0, 0, 100), true},
		{run(1, 0, 999), false}, // a retried attempt finishing the same run again
		{run(1, 1, 100), true},
	}
	for _, sv := range saves {
		saved, err := s.SaveRun(ctx, "j1", sv.run)
		if err != nil || saved != sv.want {
			t.Errorf("SaveRun(%v) = %v, %v; want %v, nil", sv.run.RunKey, saved, err, sv.want)
		}
	}
	got, err := s.Runs(ctx, "j1")
	if err != nil {
		t.Fatalf("Runs = %v", err)
	}
	want := []job.Run{*run(0, 0, 100), *run(0, 1, 100), *run(1, 0, 100), *run(1, 1, 100)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Runs (-want +got), sorted by point then repeat, first save kept:\n%s", diff)
	}
	keys, err := s.RunKeys(ctx, "j1")
	if err != nil {
		t.Fatalf("RunKeys = %v", err)
	}
	wantKeys := map[job.RunKey]bool{{Point: 0, Repeat: 0}: true, {Point: 0, Repeat: 1}: true, {Point: 1, Repeat: 0}: true, {Point: 1, Repeat: 1}: true}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("RunKeys (-want +got):\n%s", diff)
	}
}

func TestRunsOfJobWithoutRunsIsEmpty(t *testing.T) {
	s, _ := newStore(t)
	mustCreate(t, s, newJob("j1", "", 0, nil))
	got, err := s.Runs(t.Context(), "j1")
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("Runs(no runs yet) = %v, %v; want an empty non-nil slice, nil", got, err)
	}
}

// TestRunsDoneCountsStoredRuns: a job's runs_done is the number of runs
// stored, whatever progress a worker last wrote: one that died after
// storing a run but before writing the progress, or an end recorded from
// an older progress, must not make the job say fewer runs than it has.
func TestRunsDoneCountsStoredRuns(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	mustCreate(t, s, newJob("j1", "", 0, nil))
	for _, r := range []*job.Run{run(0, 0, 10), run(0, 1, 10), run(1, 0, 10)} {
		if _, err := s.SaveRun(ctx, "j1", r); err != nil {
			t.Fatal(err)
		}
	}
	// The last progress written before the worker died counts two runs.
	if err := s.SetProgress(ctx, "j1", job.Progress{RunsTotal: 4, RunsDone: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetJob(ctx, "j1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Progress.RunsDone != 3 || got.Progress.RunsTotal != 4 {
		t.Errorf("GetJob progress = %d/%d runs, want 3/4: the runs stored", got.Progress.RunsDone, got.Progress.RunsTotal)
	}
	// An update writing the stale count back (an end recorded from the
	// progress it read earlier) does not change what a reader sees.
	if _, err := s.UpdateJob(ctx, "j1", func(j *job.Job) error {
		j.Progress.RunsDone = 2
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err = s.GetJob(ctx, "j1"); err != nil || got.Progress.RunsDone != 3 {
		t.Errorf("GetJob after an update writing 2 = %v runs done, %v; want 3", got.Progress.RunsDone, err)
	}
	listed, _, err := s.ListJobs(ctx, store.ListFilter{})
	if err != nil || len(listed) != 1 || listed[0].Progress.RunsDone != 3 {
		t.Errorf("ListJobs = %v, %v; want the job with 3 runs done", listed, err)
	}
}
