package admit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// JobSelector finds a caller's newest job in a status with given labels,
// for compare_to selectors; *store.Store implements it.
type JobSelector interface {
	LatestJob(ctx context.Context, owner string, status job.Status, labels map[string]string) (*job.Job, error)
}

// resolveCompareTo pins a spec's compare_to to one job: the job id it
// names, if who may see it (an admin may name any job on purpose), or
// the newest job its selector matches among who's own jobs only, whatever
// the key's admin rights (a gate compares a pipeline with itself, and a
// selector must not wander into another tenant's history). The id is
// recorded in the returned CompareTo, so the verdict is reproducible.
// Another key's job reads as missing.
func (a *Admitter) resolveCompareTo(ctx context.Context, who Caller, ct *job.CompareTo) (*job.CompareTo, error) {
	if ct == nil {
		return nil, nil
	}
	var j *job.Job
	var err error
	if ct.JobID != "" {
		j, err = who.Job(ctx, a.deps.Store, ct.JobID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, compareToProblem("no job %q to compare with", ct.JobID)
		case err != nil:
			return nil, err
		case ct.IsSelector() && !ct.Matches(j):
			return nil, compareToProblem("job %s (%s) does not match %s", j.ID, j.Status, describeSelector(ct))
		}
	} else {
		if a.deps.Selector == nil {
			return nil, errcode.New(errcode.Unavailable, "no job selector")
		}
		j, err = a.deps.Selector.LatestJob(ctx, who.KeyID, ct.Status, ct.Labels)
		if errors.Is(err, store.ErrNotFound) {
			return nil, compareToProblem("none of your jobs matches %s", describeSelector(ct))
		}
		if err != nil {
			return nil, fmt.Errorf("admit: resolve compare_to: %w", err)
		}
	}
	resolved := *ct
	resolved.JobID = j.ID
	return &resolved, nil
}

func compareToProblem(format string, args ...any) error {
	return job.Invalid([]job.FieldError{{Field: "compare_to", Message: fmt.Sprintf(format, args...)}})
}

// describeSelector writes a selector as a person reads it:
// `status succeeded and labels branch=main`.
func describeSelector(ct *job.CompareTo) string {
	s := "status " + string(ct.Status)
	if ct.Status == "" {
		s = "any status"
	}
	if len(ct.Labels) == 0 {
		return s
	}
	pairs := make([]string, 0, len(ct.Labels))
	for _, k := range slices.Sorted(maps.Keys(ct.Labels)) {
		pairs = append(pairs, k+"="+ct.Labels[k])
	}
	return s + " and labels " + strings.Join(pairs, ", ")
}
