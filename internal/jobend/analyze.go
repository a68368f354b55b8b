package jobend

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// BaselineSource reads a job and its runs, and lists an owner's jobs for
// a trend's history; *store.Store implements it.
type BaselineSource interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
	Runs(ctx context.Context, id string) ([]job.Run, error)
	ListJobs(ctx context.Context, f store.ListFilter) ([]*job.Job, string, error)
}

// Analyze is analysis.AnalyzeWithHistory of j's runs with the job its
// compare_to was resolved to at submission and its trend's history, both
// loaded from st.
func Analyze(ctx context.Context, st BaselineSource, j *job.Job, runs []job.Run) (job.Analysis, error) {
	base, err := LoadBaseline(ctx, st, j.Spec)
	if err != nil {
		return job.Analysis{}, err
	}
	history, err := LoadHistory(ctx, st, j)
	if err != nil {
		return job.Analysis{}, err
	}
	return analysis.AnalyzeWithHistory(j.Spec, runs, base, history), nil
}

// LoadHistory loads the jobs j's trend is judged against: the newest
// HistoryWindow succeeded jobs of j's owner created before j with the
// labels of j's HistorySelector, with their runs. A job that expires
// between the listing and the read of its runs is left out. nil when the
// spec has no trend.
func LoadHistory(ctx context.Context, st BaselineSource, j *job.Job) (analysis.History, error) {
	n := j.Spec.HistoryWindow()
	if n == 0 {
		return nil, nil
	}
	jobs, err := History(ctx, st, j.Owner, j.Spec.HistorySelector(), j.CreatedAt, n, j.ID)
	if err != nil {
		return nil, err
	}
	out := make(analysis.History, 0, len(jobs))
	for _, tj := range jobs {
		out = append(out, tj.Baseline)
	}
	return out, nil
}

// History lists up to n of owner's succeeded jobs carrying labels,
// created before before (any time when zero), newest first and without
// the job skip, each with its runs: a trend's history and the trends
// API's series.
func History(ctx context.Context, st BaselineSource, owner string, labels map[string]string, before time.Time, n int, skip string) ([]analysis.TrendJob, error) {
	f := store.ListFilter{Owner: owner, Status: job.StatusSucceeded, Labels: labels, Limit: n + 1}
	var out []analysis.TrendJob
	for len(out) < n {
		jobs, next, err := st.ListJobs(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("jobend: trend history: %w", err)
		}
		for _, h := range jobs {
			if h.ID == skip || (!before.IsZero() && !h.CreatedAt.Before(before)) || len(out) == n {
				continue
			}
			runs, err := st.Runs(ctx, h.ID)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("jobend: trend history: job %s runs: %w", h.ID, err)
			}
			out = append(out, analysis.TrendJob{
				Baseline:  analysis.Baseline{JobID: h.ID, Spec: h.Spec, Runs: runs},
				CreatedAt: h.CreatedAt, Verdict: h.Verdict,
			})
		}
		if next == "" {
			break
		}
		f.Cursor = next
	}
	return out, nil
}

// LoadBaseline loads the job spec's compare_to was resolved to, with its
// runs; nil when the spec has none. A baseline job that expired is not an
// error to retry: the verdict fails, naming it.
func LoadBaseline(ctx context.Context, st BaselineSource, spec job.Spec) (*analysis.Baseline, error) {
	ct := spec.CompareTo
	if ct == nil || ct.JobID == "" {
		return nil, nil
	}
	b, err := st.GetJob(ctx, ct.JobID)
	if errors.Is(err, store.ErrNotFound) {
		return analysis.MissingBaseline(ct.JobID), nil
	}
	if err != nil {
		return nil, fmt.Errorf("jobend: baseline job %s: %w", ct.JobID, err)
	}
	runs, err := st.Runs(ctx, b.ID)
	if err != nil {
		return nil, fmt.Errorf("jobend: baseline job %s runs: %w", b.ID, err)
	}
	return &analysis.Baseline{JobID: b.ID, Spec: b.Spec, Runs: runs}, nil
}
