package store

import (
	"context"
	"fmt"

	"github.com/benchq/benchq/internal/job"
)

// LatestJob returns owner's newest job (by creation) in status with every
// one of labels, or ErrNotFound. It walks only owner's index, so another
// owner's jobs are never candidates ("anonymous" being the open mode's owner); like
// ListJobs it loads at most maxScan of them.
func (s *Store) LatestJob(ctx context.Context, owner string, status job.Status, labels map[string]string) (*job.Job, error) {
	f := ListFilter{Owner: owner, Status: status, Labels: labels}
	sc, err := s.newScan(ctx, f, 1, "+")
	if err != nil {
		return nil, fmt.Errorf("store: latest job: %w", err)
	}
	if err := sc.run(ctx); err != nil {
		return nil, fmt.Errorf("store: latest job: %w", err)
	}
	if len(sc.jobs) == 0 || sc.jobs[0].Owner != owner {
		return nil, fmt.Errorf("store: latest job: %w", ErrNotFound)
	}
	return sc.jobs[0], nil
}
