package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// discardJob deletes KEYS[2..] only while the job hash KEYS[1] still
// holds ARGV[1] ("" for no job). All are keys of one job, so the script
// stays in the job's cluster slot; the index entries and the active-job
// slot, in other slots, are removed after it. A script, not MULTI/EXEC:
// Redis out of memory refuses every command queued in a transaction,
// while a script runs and only its denyoom commands (none here) are
// refused.
var discardJob = redis.NewScript(`
local cur = redis.call("HGET", KEYS[1], "job")
if cur == false then cur = "" end
if cur ~= ARGV[1] then return 0 end
for i = 2, #KEYS do redis.call("DEL", KEYS[i]) end
return 1`)

// discardAttempts bounds DiscardJob's rounds against a job that changes
// between its read and its script.
const discardAttempts = 3

// DiscardJob undoes a job creation that failed before the job was
// accepted: it removes job id of owner with its webhook secret, index
// entries and active-job slot, whichever of them were written. It uses
// only reads, DEL and ZREM, which Redis serves even when out of memory,
// so it succeeds where the creation's writes were refused. A job no
// longer queued (a worker took a task the queue reported lost) is left
// alone with ErrConflict; a job that does not exist is no error, so a
// discard can be retried until Redis answers.
func (s *Store) DiscardJob(ctx context.Context, owner, id string) error {
	for range discardAttempts {
		done, err := s.discardOnce(ctx, owner, id)
		if err != nil {
			return fmt.Errorf("store: discard job %s: %w", id, err)
		}
		if done {
			return nil
		}
	}
	return fmt.Errorf("store: discard job %s: %w: still changing after %d attempts", id, ErrConflict, discardAttempts)
}

func (s *Store) discardOnce(ctx context.Context, owner, id string) (bool, error) {
	vals, err := s.rdb.HMGet(ctx, jobKey(id), fieldJob, fieldOwner).Result()
	if err != nil {
		return false, err
	}
	j, err := decodeJob(vals)
	if err != nil {
		return false, err
	}
	raw, member := "", ""
	keys := append([]string{jobKey(id)}, jobKeys(id)...)
	keys = append(keys, webhookSecretKey(id), deliveriesKey(id))
	if j != nil {
		switch {
		case j.Status != job.StatusQueued:
			return false, fmt.Errorf("%w: job is %s", ErrConflict, j.Status)
		case j.Owner != owner:
			return false, fmt.Errorf("%w: job belongs to another owner", ErrConflict)
		}
		raw, member = vals[0].(string), indexMember(j)
	}
	n, err := discardJob.Run(ctx, s.rdb, keys, raw).Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	if n != 1 {
		return false, nil
	}
	// Only ZREM, served out of memory too. A retry after this failed finds
	// no job and so no member: readers drop its entries (index.go).
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, activeJobsKey(owner), id)
		if member != "" {
			for _, idx := range indexKeys(owner, job.StatusQueued) {
				p.ZRem(ctx, idx, member)
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return true, nil
}
