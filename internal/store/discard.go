package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// discardJob deletes KEYS[2..1+ARGV[2]] and removes ARGV[3] from the zset
// after them and ARGV[4] from the zsets after that, only while the job
// hash KEYS[1] still holds ARGV[1] ("" for no job). A script, not
// MULTI/EXEC: Redis out of memory refuses every command queued in a
// transaction, while a script runs and only its denyoom commands (none
// here) are refused.
var discardJob = redis.NewScript(`
local cur = redis.call("HGET", KEYS[1], "job")
if cur == false then cur = "" end
if cur ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[2])
for i = 2, 1 + n do redis.call("DEL", KEYS[i]) end
redis.call("ZREM", KEYS[2 + n], ARGV[3])
for i = 3 + n, #KEYS do redis.call("ZREM", KEYS[i], ARGV[4]) end
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
	del := append(jobKeys(id), webhookSecretKey(id), deliveriesKey(id))
	keys := append([]string{jobKey(id)}, del...)
	keys = append(keys, activeJobsKey(owner))
	if j != nil {
		switch {
		case j.Status != job.StatusQueued:
			return false, fmt.Errorf("%w: job is %s", ErrConflict, j.Status)
		case j.Owner != owner:
			return false, fmt.Errorf("%w: job belongs to another owner", ErrConflict)
		}
		raw, member = vals[0].(string), indexMember(j)
		keys = append(keys, indexKeys(owner, j.Status)...)
	}
	n, err := discardJob.Run(ctx, s.rdb, keys, raw, strconv.Itoa(len(del)), id, member).Int()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	return n == 1, nil
}
