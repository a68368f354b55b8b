package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// Why a job is kept past the retention.
const (
	keepPin    = "pin"
	keepLatest = "latest"
)

// Labels by which a finished job is its template's latest on a branch.
const (
	templateLabel = "template"
	branchLabel   = "branch"
)

// touchScript refreshes the TTL of a job's keys (KEYS[2:]) to ARGV[1] ms,
// or removes it while the job's keep set (KEYS[1]) has a member: one
// script, so no write can give a kept job's key a TTL between the check
// and the refresh. Every key shares the job's slot.
var touchScript = redis.NewScript(`
local kept = redis.call('EXISTS', KEYS[1]) == 1
for i = 2, #KEYS do
  if kept then redis.call('PERSIST', KEYS[i]) else redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
end
return 0`)

// trimScript drops the entries of the indexes KEYS[2:] created before
// ARGV[1] (a ZRANGEBYLEX bound), but those in the kept set KEYS[1].
var trimScript = redis.NewScript(`
local limit = 1000 + redis.call('SCARD', KEYS[1])
for i = 2, #KEYS do
  local old = redis.call('ZRANGEBYLEX', KEYS[i], '-', ARGV[1], 'LIMIT', 0, limit)
  for _, m in ipairs(old) do
    if redis.call('SISMEMBER', KEYS[1], m) == 0 then redis.call('ZREM', KEYS[i], m) end
  end
end
return 0`)

// releaseScript takes reason ARGV[1] off the keep set KEYS[1]; when none
// is left, the job's keys KEYS[2:] get the TTL ARGV[2] ms back. It
// returns the reasons left.
var releaseScript = redis.NewScript(`
redis.call('SREM', KEYS[1], ARGV[1])
local left = redis.call('SCARD', KEYS[1])
if left == 0 then
  for i = 2, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
end
return left`)

// keepScript adds reason ARGV[1] to the keep set KEYS[1] and PERSISTs
// the job's keys KEYS[2:].
var keepScript = redis.NewScript(`
redis.call('SADD', KEYS[1], ARGV[1])
for i = 2, #KEYS do redis.call('PERSIST', KEYS[i]) end
return 0`)

// keptKeys are the keys a kept job keeps: its own and its webhook log.
func keptKeys(id string) []string {
	return append([]string{keepKey(id)}, append(jobKeys(id), deliveriesKey(id), webhookSecretKey(id))...)
}

// keep exempts job j from the retention for reason. The index entry is
// marked first (another slot), so no trim can drop the entry of a job
// whose keys already live on.
func (s *Store) keep(ctx context.Context, j *job.Job, reason string) error {
	if err := s.rdb.SAdd(ctx, keptIndexKey(), indexMember(j)).Err(); err != nil {
		return fmt.Errorf("store: keep job %s: index: %w", j.ID, err)
	}
	if err := keepScript.Run(ctx, s.rdb, keptKeys(j.ID), reason).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("store: keep job %s: %w", j.ID, err)
	}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		s.touchIndexes(ctx, p, j.Owner)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: keep job %s: indexes: %w", j.ID, err)
	}
	return nil
}

// release ends reason's exemption of job id; without another reason the
// job's keys expire a retention from now, as if just written.
func (s *Store) release(ctx context.Context, id, reason string) error {
	left, err := releaseScript.Run(ctx, s.rdb, keptKeys(id), reason, s.retention.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("store: release job %s: %w", id, err)
	}
	if left > 0 {
		return nil
	}
	j, err := s.GetJob(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: release job %s: %w", id, err)
	}
	if err := s.rdb.SRem(ctx, keptIndexKey(), indexMember(j)).Err(); err != nil {
		return fmt.Errorf("store: release job %s: index: %w", id, err)
	}
	return nil
}

// PinJob pins job id (pinned) or unpins it, and returns the job. A pinned
// job and all it stored (runs, events, webhook log) are kept past the
// retention, so a compare_to naming it, or a selector matching it, keeps
// finding it; unpinned, it expires a retention after the unpin, unless
// it is its template's latest on its branch.
// No limit applies (PinJobWithin).
func (s *Store) PinJob(ctx context.Context, id string, pinned bool) (*job.Job, error) {
	return s.PinJobWithin(ctx, id, pinned, 0)
}

// reservePin adds job ARGV[1] to the owner's pinned jobs KEYS[1] if it is
// one of them already or fewer than ARGV[2] (0: no limit) are; it
// returns {1 admitted or 0, the pinned jobs found}.
var reservePin = redis.NewScript(`
local n = redis.call('SCARD', KEYS[1])
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return {1, n} end
if tonumber(ARGV[2]) > 0 and n >= tonumber(ARGV[2]) then return {0, n} end
redis.call('SADD', KEYS[1], ARGV[1])
return {1, n + 1}
`)

// PinJobWithin is PinJob with at most max (0: any number of) pinned jobs
// per owner: a pin past it is refused with a *LimitError, counted
// atomically; an unpin frees its place.
func (s *Store) PinJobWithin(ctx context.Context, id string, pinned bool, max int) (*job.Job, error) {
	j, err := s.GetJob(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("store: pin job: %w", err)
	}
	owner := j.Owner
	if pinned {
		res, err := reservePin.Run(ctx, s.rdb, []string{pinnedJobsKey(owner)}, id, max).Int64Slice()
		if err != nil {
			return nil, fmt.Errorf("store: pin job %s: %w", id, err)
		}
		if len(res) != 2 || res[0] != 1 {
			return nil, fmt.Errorf("store: pin job %s: %w", id, &LimitError{Limit: LimitPins, Max: max, Used: int(res[len(res)-1])})
		}
		if err := s.keep(ctx, j, keepPin); err != nil {
			s.unpinCount(context.WithoutCancel(ctx), owner, id)
			return nil, err
		}
	}
	j, err = s.UpdateJob(ctx, id, func(j *job.Job) error { j.Pinned = pinned; return nil })
	if err != nil {
		if pinned {
			_ = s.release(context.WithoutCancel(ctx), id, keepPin)
			s.unpinCount(context.WithoutCancel(ctx), owner, id)
		}
		return nil, fmt.Errorf("store: pin job: %w", err)
	}
	if !pinned {
		if err := s.release(ctx, id, keepPin); err != nil {
			return nil, err
		}
		s.unpinCount(ctx, owner, id)
	}
	return j, nil
}

// unpinCount frees job id's place among owner's pinned jobs; a failure
// leaves it counted until the next unpin of the job.
func (s *Store) unpinCount(ctx context.Context, owner, id string) {
	_ = s.rdb.SRem(ctx, pinnedJobsKey(owner), id).Err()
}

// PinnedJobs is how many of owner's jobs are pinned.
func (s *Store) PinnedJobs(ctx context.Context, owner string) (int, error) {
	n, err := s.rdb.SCard(ctx, pinnedJobsKey(owner)).Result()
	if err != nil {
		return 0, fmt.Errorf("store: count pinned jobs: %w", err)
	}
	return int(n), nil
}

// keepLatest makes j, which just succeeded, its template's latest job on
// its branch: kept, and the one it replaces released. Jobs without a
// template label are no template's.
func (s *Store) keepLatest(ctx context.Context, j *job.Job) error {
	tpl, ok := j.Spec.Labels[templateLabel]
	if !ok || j.Status != job.StatusSucceeded {
		return nil
	}
	if err := s.keep(ctx, j, keepLatest); err != nil {
		return err
	}
	old, err := s.rdb.SetArgs(ctx, latestKey(j.Owner, tpl, j.Spec.Labels[branchLabel]), j.ID, redis.SetArgs{Get: true}).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("store: latest job of template %s: %w", tpl, err)
	}
	if old == "" || old == j.ID {
		return nil
	}
	return s.release(ctx, old, keepLatest)
}

// Kept reports why job id is exempt from the retention ("pin", "latest"),
// none when it is not.
func (s *Store) Kept(ctx context.Context, id string) ([]string, error) {
	r, err := s.rdb.SMembers(ctx, keepKey(id)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: kept job %s: %w", id, err)
	}
	return r, nil
}
