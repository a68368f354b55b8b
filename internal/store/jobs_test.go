package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

func TestCreateGetRoundTrip(t *testing.T) {
	s, _ := newStore(t)
	want := newJob("j1", "key-1", 0, map[string]string{"branch": "main"})
	mustCreate(t, s, want)
	got, err := s.GetJob(t.Context(), "j1")
	if err != nil {
		t.Fatalf("GetJob(j1) = %v, want nil", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GetJob(j1) differs from the created job (-want +got):\n%s", diff)
	}
	if got.Progress.RunsTotal != 4 {
		t.Errorf("GetJob(j1).Progress.RunsTotal = %d, want 4", got.Progress.RunsTotal)
	}
}

func TestCreateTwiceConflicts(t *testing.T) {
	s, _ := newStore(t)
	mustCreate(t, s, newJob("j1", "", 0, nil))
	err := s.CreateJob(t.Context(), newJob("j1", "other", 1, nil))
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second CreateJob(j1) = %v, want ErrConflict", err)
	}
	got, err := s.GetJob(t.Context(), "j1")
	if err != nil || got.Owner != "" {
		t.Errorf("GetJob(j1) = owner %q, %v; want the first job kept (owner \"\")", got.Owner, err)
	}
}

func TestMissingJobIsNotFound(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	noop := func(*job.Job) error { return nil }
	calls := map[string]error{}
	_, calls["GetJob"] = s.GetJob(ctx, "nope")
	_, calls["UpdateJob"] = s.UpdateJob(ctx, "nope", noop)
	_, calls["SaveRun"] = s.SaveRun(ctx, "nope", &job.Run{})
	_, calls["Runs"] = s.Runs(ctx, "nope")
	calls["SetProgress"] = s.SetProgress(ctx, "nope", job.Progress{})
	for name, err := range calls {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s(nope) = %v, want ErrNotFound", name, err)
		}
	}
}

func TestUpdateJobTransitions(t *testing.T) {
	s, _ := newStore(t)
	mustCreate(t, s, newJob("j1", "", 0, nil))
	now := base.Add(time.Minute)
	got, err := s.UpdateJob(t.Context(), "j1", func(j *job.Job) error {
		j.ID, j.Owner = "hijack", "someone" // immutable: ignored
		return j.Transition(job.StatusRunning, now)
	})
	if err != nil {
		t.Fatalf("UpdateJob(queued -> running) = %v, want nil", err)
	}
	if got.Status != job.StatusRunning || got.ID != "j1" || got.Owner != "" {
		t.Errorf("UpdateJob = status %s id %s owner %q, want running j1 \"\"", got.Status, got.ID, got.Owner)
	}
	_, err = s.UpdateJob(t.Context(), "j1", func(j *job.Job) error {
		return j.Transition(job.StatusRunning, now)
	})
	if !errors.Is(err, store.ErrConflict) || !errors.Is(err, job.ErrBadTransition) {
		t.Errorf("UpdateJob(running -> running) = %v, want ErrConflict and job.ErrBadTransition", err)
	}
	stored, _ := s.GetJob(t.Context(), "j1")
	if stored.Status != job.StatusRunning || stored.StartedAt == nil || !stored.StartedAt.Equal(now) {
		t.Errorf("GetJob after updates = %s started %v, want running started %v", stored.Status, stored.StartedAt, now)
	}
}

// TestUpdateJobNoLostUpdate has 20 writers each add 1 five times to the
// same job at once: an update lost to a race would leave less than 100.
func TestUpdateJobNoLostUpdate(t *testing.T) {
	s, _ := newStore(t)
	mustCreate(t, s, newJob("j1", "", 0, nil))
	const writers, each = 20, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for range writers {
		wg.Go(func() {
			for range each {
				_, err := s.UpdateJob(t.Context(), "j1", func(j *job.Job) error {
					j.Progress.RequestsDone++
					return nil
				})
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("UpdateJob = %v, want nil", err)
		}
	}
	got, err := s.GetJob(t.Context(), "j1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Progress.RequestsDone != writers*each {
		t.Errorf("RequestsDone after %d concurrent increments = %d, want %d", writers*each, got.Progress.RequestsDone, writers*each)
	}
}

func TestUpdateJobReturnsFnError(t *testing.T) {
	s, _ := newStore(t)
	mustCreate(t, s, newJob("j1", "", 0, nil))
	boom := errors.New("boom")
	_, err := s.UpdateJob(t.Context(), "j1", func(j *job.Job) error {
		j.Error = "must not be stored"
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("UpdateJob(fn fails) = %v, want it to wrap fn's error", err)
	}
	if got, _ := s.GetJob(t.Context(), "j1"); got.Error != "" {
		t.Errorf("Error after a failed fn = %q, want \"\" (nothing stored)", got.Error)
	}
}

func TestSetProgressShowsInGetJob(t *testing.T) {
	s, _ := newStore(t)
	mustCreate(t, s, newJob("j1", "", 0, nil))
	for _, r := range []*job.Run{run(0, 0, 10), run(0, 1, 10)} { // runs_done counts them
		if _, err := s.SaveRun(t.Context(), "j1", r); err != nil {
			t.Fatal(err)
		}
	}
	p := job.Progress{RunsTotal: 4, RunsDone: 2, RequestsDone: 77, CurrentRPS: 1234.5, CurrentRun: &job.RunKey{Point: 1, Repeat: 0}}
	if err := s.SetProgress(t.Context(), "j1", p); err != nil {
		t.Fatalf("SetProgress = %v", err)
	}
	// A status change must not clobber the progress written apart.
	if _, err := s.UpdateJob(t.Context(), "j1", func(j *job.Job) error { j.Verdict = "none"; return nil }); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetJob(t.Context(), "j1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got.Progress); diff != "" {
		t.Errorf("GetJob.Progress (-want +got):\n%s", diff)
	}
}
