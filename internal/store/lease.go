package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// A job's lease says that a live worker attempt runs it: the attempt
// takes it before it starts the job and renews it every few seconds while
// it runs, so a lease that ran out means the attempt died (or lost Redis
// for longer than the lease). Much shorter than asynq's own task lease,
// it is how a dead worker's job is noticed within seconds.

// renewLease extends a lease only for its holder, so an attempt that lost
// its lease cannot extend the one another attempt took since.
var renewLease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

// releaseLease deletes a lease only for its holder.
var releaseLease = redis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
end
return 0`)

// AcquireLease takes job id's lease for holder for ttl, and reports
// whether it did: false means another holder's lease is live.
func (s *Store) AcquireLease(ctx context.Context, id, holder string, ttl time.Duration) (bool, error) {
	ok, err := s.rdb.SetNX(ctx, leaseKey(id), holder, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("store: acquire lease of job %s: %w", id, err)
	}
	return ok, nil
}

// RenewLease extends holder's lease of job id to ttl from now, and
// reports whether holder still had it.
func (s *Store) RenewLease(ctx context.Context, id, holder string, ttl time.Duration) (bool, error) {
	n, err := renewLease.Run(ctx, s.rdb, []string{leaseKey(id)}, holder, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("store: renew lease of job %s: %w", id, err)
	}
	return n == 1, nil
}

// ReleaseLease gives up holder's lease of job id; another holder's lease
// is left alone.
func (s *Store) ReleaseLease(ctx context.Context, id, holder string) error {
	if err := releaseLease.Run(ctx, s.rdb, []string{leaseKey(id)}, holder).Err(); err != nil {
		return fmt.Errorf("store: release lease of job %s: %w", id, err)
	}
	return nil
}

// LeaseHolder returns the holder of job id's live lease, or "" when none.
func (s *Store) LeaseHolder(ctx context.Context, id string) (string, error) {
	h, err := s.rdb.Get(ctx, leaseKey(id)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: lease of job %s: %w", id, err)
	}
	return h, nil
}

// UnleasedRunning returns up to limit running jobs that no live lease
// holds, oldest first: the jobs whose attempt died. It reads the running
// index, then the jobs and their leases in one round trip (running jobs
// are as many as the workers run at once), and drops the entries of jobs
// that expired or ended, as listings do.
func (s *Store) UnleasedRunning(ctx context.Context, limit int) ([]string, error) {
	index := statusIndexKey(job.StatusRunning)
	members, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{
		Key: index, Start: "-", Stop: "+", ByLex: true, Count: int64(limit),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("store: running jobs: %w", err)
	}
	if len(members) == 0 {
		return nil, nil
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = memberID(m)
	}
	jobs, err := s.loadJobs(ctx, s.rdb, ids)
	if err != nil {
		return nil, fmt.Errorf("store: running jobs: %w", err)
	}
	leased := make([]*redis.IntCmd, len(members))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			leased[i] = p.Exists(ctx, leaseKey(id))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: leases of running jobs: %w", err)
	}
	var out []string
	var drop []any
	for i, m := range members {
		switch s.classify(m, jobs[i], job.StatusRunning) {
		case entryGone, entryStray:
			drop = append(drop, m)
		case entryLive:
			if leased[i].Val() == 0 {
				out = append(out, ids[i])
			}
		}
	}
	if len(drop) > 0 {
		if err := s.rdb.ZRem(ctx, index, drop...).Err(); err != nil {
			return nil, fmt.Errorf("store: drop stale running entries: %w", err)
		}
	}
	return out, nil
}
