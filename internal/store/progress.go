package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// SetProgress records job id's live progress. It writes a key of its own,
// not the job, so the worker's several writes a second never make an
// UpdateJob (a cancel, a status change) retry. GetJob shows it.
func (s *Store) SetProgress(ctx context.Context, id string, p job.Progress) error {
	if err := s.mustExist(ctx, id); err != nil {
		return fmt.Errorf("store: set progress: %w", err)
	}
	_, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		s.setProgress(ctx, pipe, id, p)
		s.touchJob(ctx, pipe, id)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: set progress of job %s: %w", id, err)
	}
	return nil
}

// setProgress queues the write of a progress value. Progress has only
// numbers and a small struct, so encoding cannot fail.
func (s *Store) setProgress(ctx context.Context, pipe redis.Pipeliner, id string, p job.Progress) {
	data, _ := json.Marshal(p)
	pipe.Set(ctx, progressKey(id), data, s.retention)
}

// sameProgress compares two progress values, CurrentRun by value.
func sameProgress(a, b job.Progress) bool {
	ra, rb := a.CurrentRun, b.CurrentRun
	a.CurrentRun, b.CurrentRun = nil, nil
	if a != b {
		return false
	}
	if ra == nil || rb == nil {
		return ra == rb
	}
	return *ra == *rb
}
