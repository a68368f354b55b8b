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

// DiscardJob undoes the creation of j that failed before the job was
// accepted: it removes the job with its webhook secret, index entries and
// active-job slot, whichever of them were written. It uses only reads,
// DEL and ZREM, which Redis serves even when out of memory, so it
// succeeds where the creation's writes were refused. The index entries go
// whether or not the job was stored: a creation lists the job before it
// writes it (index.go), so one refused or cut off in between leaves
// entries and no job. A job no longer queued (a worker took a task the
// queue reported lost), or another job stored under the same ID, is left
// alone with ErrConflict; a job that does not exist is no error, so a
// discard can be retried until Redis answers.
func (s *Store) DiscardJob(ctx context.Context, j *job.Job) error {
	for range discardAttempts {
		done, err := s.discardOnce(ctx, j)
		if err != nil {
			return fmt.Errorf("store: discard job %s: %w", j.ID, err)
		}
		if done {
			return nil
		}
	}
	return fmt.Errorf("store: discard job %s: %w: still changing after %d attempts", j.ID, ErrConflict, discardAttempts)
}

func (s *Store) discardOnce(ctx context.Context, j *job.Job) (bool, error) {
	vals, err := s.rdb.HMGet(ctx, jobKey(j.ID), fieldJob, fieldOwner).Result()
	if err != nil {
		return false, err
	}
	cur, err := decodeJob(vals)
	if err != nil {
		return false, err
	}
	raw, member := "", indexMember(j)
	keys := append([]string{jobKey(j.ID)}, jobKeys(j.ID)...)
	keys = append(keys, webhookSecretKey(j.ID), deliveriesKey(j.ID))
	if cur != nil {
		switch {
		case cur.Status != job.StatusQueued:
			return false, fmt.Errorf("%w: job is %s", ErrConflict, cur.Status)
		case cur.Owner != j.Owner || indexMember(cur) != member:
			return false, fmt.Errorf("%w: another job has that id", ErrConflict)
		}
		raw = vals[0].(string)
	}
	n, err := discardJob.Run(ctx, s.rdb, keys, raw).Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	if n != 1 {
		return false, nil
	}
	// Only ZREM, served out of memory too; a retry after this failed
	// finds no job and removes the same entries.
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, activeJobsKey(j.Owner), j.ID)
		for _, idx := range indexKeys(j, job.StatusQueued) {
			p.ZRem(ctx, idx, member)
		}
		p.HDel(ctx, ownerNamesKey(j.Owner), member)
		return nil
	})
	if err != nil {
		return false, err
	}
	return true, nil
}
