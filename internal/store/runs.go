package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// SaveRun stores one finished run of job jobID under its RunKey, unless a
// run with that key is already stored: saved is false then and the stored
// run is kept. A worker attempt retried after a crash may thus finish a run
// again without it ever counting twice.
func (s *Store) SaveRun(ctx context.Context, jobID string, r *job.Run) (saved bool, err error) {
	if r == nil {
		return false, fmt.Errorf("store: save run of job %s: nil run", jobID)
	}
	data, err := json.Marshal(r)
	if err != nil {
		return false, fmt.Errorf("store: save run %v of job %s: encode: %w", r.RunKey, jobID, err)
	}
	if err := s.mustExist(ctx, jobID); err != nil {
		return false, fmt.Errorf("store: save run: %w", err)
	}
	var set *redis.BoolCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		set = p.HSetNX(ctx, runsKey(jobID), runField(r.RunKey), data)
		s.touchJob(ctx, p, jobID)
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: save run %v of job %s: %w", r.RunKey, jobID, err)
	}
	return set.Val(), nil
}

// Runs returns every stored run of job id, sorted by point then repeat. A
// job without runs gives an empty slice; a missing job ErrNotFound.
func (s *Store) Runs(ctx context.Context, id string) ([]job.Run, error) {
	all, err := s.rdb.HGetAll(ctx, runsKey(id)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: runs of job %s: %w", id, err)
	}
	if len(all) == 0 {
		if err := s.mustExist(ctx, id); err != nil {
			return nil, fmt.Errorf("store: runs: %w", err)
		}
		return []job.Run{}, nil
	}
	runs := make([]job.Run, 0, len(all))
	for field, data := range all {
		var r job.Run
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return nil, fmt.Errorf("store: runs of job %s: decode %s: %w", id, field, err)
		}
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b job.Run) int {
		if a.Point != b.Point {
			return a.Point - b.Point
		}
		return a.Repeat - b.Repeat
	})
	return runs, nil
}

// RunKeys returns the keys of the runs stored for job id, without their
// results: what a retried worker skips.
func (s *Store) RunKeys(ctx context.Context, id string) (map[job.RunKey]bool, error) {
	fields, err := s.rdb.HKeys(ctx, runsKey(id)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: run keys of job %s: %w", id, err)
	}
	keys := make(map[job.RunKey]bool, len(fields))
	for _, f := range fields {
		k, err := parseRunField(f)
		if err != nil {
			return nil, fmt.Errorf("store: run keys of job %s: %w", id, err)
		}
		keys[k] = true
	}
	return keys, nil
}
