package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// baselineSource reads the compare_to job; *store.Store implements it.
type baselineSource interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
	Runs(ctx context.Context, id string) ([]job.Run, error)
}

// loadBaseline loads the job spec's compare_to was resolved to at
// submission, with its runs, for job.AnalyzeAgainst; nil when the spec has
// none. A baseline job that expired meanwhile is not an error to retry:
// the verdict fails, naming it.
func loadBaseline(ctx context.Context, st baselineSource, spec job.Spec) (*job.Baseline, error) {
	ct := spec.CompareTo
	if ct == nil || ct.JobID == "" {
		return nil, nil
	}
	b, err := st.GetJob(ctx, ct.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return job.MissingBaseline(ct.JobID), nil
	}
	if err != nil {
		return nil, fmt.Errorf("worker: baseline job %s: %w", ct.JobID, err)
	}
	runs, err := st.Runs(ctx, b.ID)
	if err != nil {
		return nil, fmt.Errorf("worker: baseline job %s runs: %w", b.ID, err)
	}
	return &job.Baseline{JobID: b.ID, Spec: b.Spec, Runs: runs}, nil
}
