package store

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// ActiveSlot is the outcome of an admission to an owner's active jobs.
type ActiveSlot struct {
	Admitted bool
	// Count is the owner's queued + running jobs: with the new one when
	// admitted, as found when refused.
	Count int
}

// reserveActive counts and admits in one step inside Redis, so concurrent
// submissions from any number of API processes can never overshoot the
// limit: of 10 racing requests with room for 3, exactly 3 get in.
var reserveActive = redis.NewScript(`
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[2]) then
  return {0, n}
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, n + 1}
`)

// reconcileGrace is how old an admission must be before ReserveActive may
// drop it for lack of a job: younger ones may belong to a request still
// between admission and CreateJob.
const reconcileGrace = time.Minute

// ReserveActive admits job id into owner's queued + running jobs if fewer
// than limit are there. The slot is given back when the job reaches a
// terminal status (UpdateJob, after the job is written) or by ReleaseActive. When the owner is at its
// limit, slots whose job is gone or finished (a crash between admission and
// CreateJob, a release lost with a Redis blip) are reclaimed first, so a
// leak heals at the next refusal instead of locking the owner out.
func (s *Store) ReserveActive(ctx context.Context, owner, id string, limit int) (ActiveSlot, error) {
	slot, err := s.reserveActive(ctx, owner, id, limit)
	if err != nil || slot.Admitted {
		return slot, err
	}
	freed, err := s.reclaimActive(ctx, owner)
	if err != nil {
		return ActiveSlot{}, err
	}
	if freed == 0 {
		return slot, nil
	}
	return s.reserveActive(ctx, owner, id, limit)
}

func (s *Store) reserveActive(ctx context.Context, owner, id string, limit int) (ActiveSlot, error) {
	res, err := reserveActive.Run(ctx, s.rdb, []string{activeJobsKey(owner)},
		id, limit, s.now().UnixMilli(), s.retention.Milliseconds()).Int64Slice()
	if err != nil {
		return ActiveSlot{}, fmt.Errorf("store: reserve active job %s: %w", id, err)
	}
	if len(res) != 2 {
		return ActiveSlot{}, fmt.Errorf("store: reserve active job %s: %d values in the reply, want 2", id, len(res))
	}
	return ActiveSlot{Admitted: res[0] == 1, Count: int(res[1])}, nil
}

// reclaimActive drops owner's slots held by jobs that are finished, or
// missing after the grace period; it returns how many it dropped.
func (s *Store) reclaimActive(ctx context.Context, owner string) (int, error) {
	key := activeJobsKey(owner)
	members, err := s.rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
	if err != nil {
		return 0, fmt.Errorf("store: reclaim active jobs: %w", err)
	}
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.Member.(string)
	}
	jobs, err := s.loadJobs(ctx, s.rdb, ids)
	if err != nil {
		return 0, fmt.Errorf("store: reclaim active jobs: %w", err)
	}
	cutoff := float64(s.now().Add(-reconcileGrace).UnixMilli())
	var stale []any
	for i, j := range jobs {
		if j != nil && j.Status.Terminal() || j == nil && members[i].Score < cutoff {
			stale = append(stale, ids[i])
		}
	}
	if len(stale) == 0 {
		return 0, nil
	}
	n, err := s.rdb.ZRem(ctx, key, stale...).Result()
	if err != nil {
		return 0, fmt.Errorf("store: reclaim active jobs: %w", err)
	}
	return int(n), nil
}

// ReleaseActive gives job id's slot back, for a job admitted but never
// stored; a job that was stored gives its slot back by finishing.
func (s *Store) ReleaseActive(ctx context.Context, owner, id string) error {
	if err := s.rdb.ZRem(ctx, activeJobsKey(owner), id).Err(); err != nil {
		return fmt.Errorf("store: release active job %s: %w", id, err)
	}
	return nil
}

// ActiveJobs is how many of owner's jobs hold a slot.
func (s *Store) ActiveJobs(ctx context.Context, owner string) (int, error) {
	n, err := s.rdb.ZCard(ctx, activeJobsKey(owner)).Result()
	if err != nil {
		return 0, fmt.Errorf("store: count active jobs: %w", err)
	}
	return int(n), nil
}

// Submission is the verdict of the submission rate limiter.
type Submission struct {
	Allowed bool
	// RetryAfter is how long until the next submission would be allowed;
	// zero when allowed.
	RetryAfter time.Duration
}

// AllowSubmission counts one submission of owner against perMinute with
// redis_rate's GCRA (bursts up to perMinute, refilled evenly). Its state is
// in Redis, so every API replica draws from the same budget.
func (s *Store) AllowSubmission(ctx context.Context, owner string, perMinute int) (Submission, error) {
	res, err := redis_rate.NewLimiter(s.rdb).Allow(ctx, submissionsKey(owner), redis_rate.PerMinute(perMinute))
	if err != nil {
		return Submission{}, fmt.Errorf("store: submission rate of %q: %w", owner, err)
	}
	if res.Allowed > 0 {
		return Submission{Allowed: true}, nil
	}
	return Submission{RetryAfter: res.RetryAfter}, nil
}
