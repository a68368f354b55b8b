package job

import (
	"errors"
	"testing"
	"time"
)

func TestTransitions(t *testing.T) {
	all := []Status{StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusCanceled}
	allowed := map[[2]Status]bool{
		{StatusQueued, StatusRunning}:    true,
		{StatusQueued, StatusCanceled}:   true,
		{StatusRunning, StatusSucceeded}: true,
		{StatusRunning, StatusFailed}:    true,
		{StatusRunning, StatusCanceled}:  true,
		{StatusRunning, StatusQueued}:    true,
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, from := range all {
		for _, to := range all {
			j := &Job{Status: from}
			err := j.Transition(to, now)
			if allowed[[2]Status{from, to}] {
				if err != nil || j.Status != to {
					t.Errorf("Transition(%s -> %s) = %v, status %s, want nil, %s", from, to, err, j.Status, to)
				}
				continue
			}
			if !errors.Is(err, ErrBadTransition) || j.Status != from {
				t.Errorf("Transition(%s -> %s) = %v, status %s, want ErrBadTransition, %s", from, to, err, j.Status, from)
			}
		}
	}
}

func TestTransitionTimes(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	j := New("id", "", validSpec(), t0)
	if j.Status != StatusQueued || j.Progress.RunsTotal != 8 {
		t.Fatalf("New = status %s runs %d, want queued, 8", j.Status, j.Progress.RunsTotal)
	}
	steps := []struct {
		to Status
		at time.Duration
	}{{StatusRunning, time.Second}, {StatusQueued, 2 * time.Second}, {StatusRunning, 3 * time.Second}, {StatusSucceeded, 4 * time.Second}}
	for _, s := range steps {
		if err := j.Transition(s.to, t0.Add(s.at)); err != nil {
			t.Fatalf("Transition(%s) = %v", s.to, err)
		}
	}
	if j.StartedAt == nil || !j.StartedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("StartedAt = %v, want the first start %v", j.StartedAt, t0.Add(time.Second))
	}
	if j.FinishedAt == nil || !j.FinishedAt.Equal(t0.Add(4*time.Second)) {
		t.Errorf("FinishedAt = %v, want %v", j.FinishedAt, t0.Add(4*time.Second))
	}
}
