package jobend

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// BaselineSource reads a job and its runs; *store.Store implements it.
type BaselineSource interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
	Runs(ctx context.Context, id string) ([]job.Run, error)
}

// Analyze is job.AnalyzeAgainst of j's runs with the job its compare_to
// was resolved to at submission loaded from st.
func Analyze(ctx context.Context, st BaselineSource, j *job.Job, runs []job.Run) (job.Analysis, error) {
	base, err := LoadBaseline(ctx, st, j.Spec)
	if err != nil {
		return job.Analysis{}, err
	}
	return job.AnalyzeAgainst(j.Spec, runs, base), nil
}

// LoadBaseline loads the job spec's compare_to was resolved to, with its
// runs; nil when the spec has none. A baseline job that expired is not an
// error to retry: the verdict fails, naming it.
func LoadBaseline(ctx context.Context, st BaselineSource, spec job.Spec) (*job.Baseline, error) {
	ct := spec.CompareTo
	if ct == nil || ct.JobID == "" {
		return nil, nil
	}
	b, err := st.GetJob(ctx, ct.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return job.MissingBaseline(ct.JobID), nil
	}
	if err != nil {
		return nil, fmt.Errorf("jobend: baseline job %s: %w", ct.JobID, err)
	}
	runs, err := st.Runs(ctx, b.ID)
	if err != nil {
		return nil, fmt.Errorf("jobend: baseline job %s runs: %w", b.ID, err)
	}
	return &job.Baseline{JobID: b.ID, Spec: b.Spec, Runs: runs}, nil
}
