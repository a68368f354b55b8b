package jobend_test

import (
	"errors"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobend"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

func TestCancel(t *testing.T) {
	st := store.New(redistest.Start(t).Client(t), store.Options{})
	ctx := t.Context()
	now := time.Now().UTC()
	spec := job.Spec{Targets: []job.Target{{Name: "a", URL: "http://127.0.0.1:1/"}}, Sweep: job.Sweep{Concurrency: []int{1}, Requests: []int{10}}}.WithDefaults()
	for id, to := range map[string][]job.Status{"q": nil, "r": {job.StatusRunning}, "d": {job.StatusRunning, job.StatusSucceeded}} {
		if err := st.CreateJob(ctx, job.New(id, "", spec, now)); err != nil {
			t.Fatal(err)
		}
		for _, s := range to {
			if _, err := st.UpdateJob(ctx, id, func(j *job.Job) error { return j.Transition(s, now) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	e := jobend.New(st, nil, nil)
	tests := []struct {
		id         string
		wantStatus job.Status
		wantErr    error
	}{
		{"q", job.StatusCanceled, nil}, // never starts
		{"r", job.StatusRunning, nil},  // the worker stops it
		{"d", "", store.ErrConflict},   // already finished
		{"q", "", store.ErrConflict},   // canceled is final
	}
	for _, tt := range tests {
		got, err := e.Cancel(ctx, tt.id)
		if !errors.Is(err, tt.wantErr) {
			t.Fatalf("Cancel(%s) = %v, want %v", tt.id, err, tt.wantErr)
		}
		if err != nil {
			continue
		}
		if got.Status != tt.wantStatus || !got.CancelRequested {
			t.Errorf("Cancel(%s) = %s cancel_requested=%v, want %s true", tt.id, got.Status, got.CancelRequested, tt.wantStatus)
		}
		if ended := got.Status.Terminal(); ended != (got.Analysis != nil) {
			t.Errorf("Cancel(%s): ended %v with analysis %v; want the analysis kept exactly when it ends", tt.id, ended, got.Analysis != nil)
		}
		if flag, err := st.CancelRequested(ctx, tt.id); !flag || err != nil {
			t.Errorf("CancelRequested(%s) = %v, %v; want true, nil", tt.id, flag, err)
		}
	}
	if flag, err := st.CancelRequested(ctx, "d"); flag || err != nil {
		t.Errorf("CancelRequested(d) = %v, %v; want false, nil (finished jobs are not flagged)", flag, err)
	}
	for id, want := range map[string]int{"q": 1, "r": 0} {
		events, err := st.ReadEvents(ctx, id, "0", 0)
		if err != nil || len(events) != want || (want == 1 && events[0].Type != job.EventFinished) {
			t.Errorf("ReadEvents(%s) = %+v, %v; want %d job.finished event", id, events, err, want)
		}
	}
}
