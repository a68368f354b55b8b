package store_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
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
