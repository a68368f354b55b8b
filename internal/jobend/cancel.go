package jobend

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// Cancel asks for job id to stop: it raises the cancel flag the worker
// polls and, when the job is still queued, ends it canceled (End) so it
// never starts; the worker skips a canceled job. A running job stays
// running until the worker sees the flag. A job that already finished
// gives an error wrapping store.ErrConflict.
func (e *Ender) Cancel(ctx context.Context, id string) (*job.Job, error) {
	res, err := e.End(ctx, id, How{Decide: cancelJob, Level: slog.LevelInfo, Msg: "jobend: queued job canceled"})
	if err != nil {
		return nil, fmt.Errorf("jobend: cancel job %s: %w", id, err)
	}
	return res.Job, nil
}

func cancelJob(j *job.Job, _ []job.Run) (job.Status, string, error) {
	if j.Status.Terminal() {
		return "", "", fmt.Errorf("%w: job is %s", store.ErrConflict, j.Status)
	}
	j.CancelRequested = true
	if j.Status == job.StatusQueued {
		return job.StatusCanceled, "", nil
	}
	return "", "", nil
}
