package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// pipeliner is what loadJobs reads through: the client, or a WATCHed
// transaction.
type pipeliner interface {
	Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error)
}

// loadJobs reads jobs in one round trip, each with its latest progress;
// the slice holds nil where a job does not exist. A job's runs_done is
// the number of runs stored, counted here whatever the progress written
// says: the progress is written after the run is stored, so a worker that
// dies between the two, or an end written from an older progress, would
// otherwise leave it short.
func (s *Store) loadJobs(ctx context.Context, c pipeliner, ids []string) ([]*job.Job, error) {
	hashes := make([]*redis.SliceCmd, len(ids))
	progress := make([]*redis.StringCmd, len(ids))
	stored := make([]*redis.IntCmd, len(ids))
	// Each command's own error is checked below: a failed count alone
	// must not make the job unreadable.
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			hashes[i] = p.HMGet(ctx, jobKey(id), fieldJob, fieldOwner)
			progress[i] = p.Get(ctx, progressKey(id))
			stored[i] = p.HLen(ctx, runsKey(id))
		}
		return nil
	})
	jobs := make([]*job.Job, len(ids))
	for i, id := range ids {
		if err := hashes[i].Err(); err != nil {
			return nil, err
		}
		j, err := decodeJob(hashes[i].Val())
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", id, err)
		}
		if j == nil {
			continue
		}
		if raw, err := progress[i].Bytes(); err == nil {
			if err := json.Unmarshal(raw, &j.Progress); err != nil {
				return nil, fmt.Errorf("job %s: decode progress: %w", id, err)
			}
		} else if !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("job %s: progress: %w", id, err)
		}
		// A runs key that cannot be counted (its read fails as the runs'
		// own reads will) leaves the progress as written, so the job can
		// still be read and failed.
		if n, err := stored[i].Result(); err == nil {
			j.Progress.RunsDone = int(n)
		}
		jobs[i] = j
	}
	return jobs, nil
}

// decodeJob reads HMGET job owner; nil, nil when the hash is missing.
func decodeJob(vals []any) (*job.Job, error) {
	if len(vals) != 2 || vals[0] == nil {
		return nil, nil
	}
	data, ok := vals[0].(string)
	if !ok {
		return nil, fmt.Errorf("job field is %T", vals[0])
	}
	var j job.Job
	if err := json.Unmarshal([]byte(data), &j); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	j.Owner, _ = vals[1].(string)
	return &j, nil
}
