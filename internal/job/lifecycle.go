package job

import (
	"fmt"
	"time"
)

// New returns a queued job for a spec that has been defaulted and
// validated, with its run count known for progress.
func New(id, owner string, spec Spec, now time.Time) *Job {
	return &Job{
		ID:        id,
		Owner:     owner,
		Spec:      spec,
		Status:    StatusQueued,
		CreatedAt: now,
		Progress:  Progress{RunsTotal: len(spec.Schedule())},
	}
}

// next lists the statuses each status may move to. running
// -> queued is a worker handing the job back on shutdown; it runs again
// later and skips the runs already stored.
func next(from Status) []Status {
	switch from {
	case StatusQueued:
		return []Status{StatusRunning, StatusCanceled}
	case StatusRunning:
		return []Status{StatusSucceeded, StatusFailed, StatusCanceled, StatusQueued}
	default:
		return nil // terminal, or unknown
	}
}

// Transition moves j to status to at time now, or returns an error
// wrapping ErrBadTransition and leaves j unchanged. The first move to
// running sets StartedAt (a job handed back keeps it); a terminal status
// sets FinishedAt.
func (j *Job) Transition(to Status, now time.Time) error {
	if !canMove(j.Status, to) {
		return fmt.Errorf("%w: %s -> %s", ErrBadTransition, j.Status, to)
	}
	if to == StatusRunning && j.StartedAt == nil {
		j.StartedAt = &now
	}
	if to.Terminal() {
		j.FinishedAt = &now
	}
	if to == StatusQueued {
		j.Progress.CurrentRun = nil
	}
	j.Status = to
	return nil
}

func canMove(from, to Status) bool {
	for _, s := range next(from) {
		if s == to {
			return true
		}
	}
	return false
}
