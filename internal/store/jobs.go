package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// maxTxAttempts bounds UpdateJob's optimistic retries. Each lost round
// means another writer committed, so 20 writers hammering one job all get
// through well within it.
const maxTxAttempts = 100

// CreateJob stores a new job and lists it. It fails with ErrConflict when a
// job with that ID exists.
func (s *Store) CreateJob(ctx context.Context, j *job.Job) error {
	if j == nil || j.ID == "" {
		return errors.New("store: create job: empty id")
	}
	data, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("store: create job %s: encode: %w", j.ID, err)
	}
	key := jobKey(j.ID)
	// Listed before it is stored, so no crash between the two steps leaves
	// a job that no listing shows (index.go).
	if err := s.listJob(ctx, j); err != nil {
		return fmt.Errorf("store: create job %s: list: %w", j.ID, err)
	}
	err = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.Exists(ctx, key).Result()
		if err != nil {
			return err
		}
		if n > 0 {
			return ErrConflict
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			s.queueJobWrite(ctx, p, j, data)
			return nil
		})
		return err
	}, key)
	if errors.Is(err, redis.TxFailedErr) {
		err = ErrConflict // created concurrently under the same ID
	}
	if err != nil {
		return fmt.Errorf("store: create job %s: %w", j.ID, err)
	}
	return nil
}

// queueJobWrite queues the write of new job j, encoded as data, on p.
func (s *Store) queueJobWrite(ctx context.Context, p redis.Pipeliner, j *job.Job, data []byte) {
	p.HSet(ctx, jobKey(j.ID), fieldJob, data, fieldOwner, j.Owner)
	s.touchJob(ctx, p, j.ID)
}

// GetJob returns a job with its latest progress, or ErrNotFound.
func (s *Store) GetJob(ctx context.Context, id string) (*job.Job, error) {
	jobs, err := s.loadJobs(ctx, s.rdb, []string{id})
	if err != nil {
		return nil, fmt.Errorf("store: get job %s: %w", id, err)
	}
	if jobs[0] == nil {
		return nil, fmt.Errorf("store: get job %s: %w", id, ErrNotFound)
	}
	return jobs[0], nil
}

// UpdateJob applies fn to the current job and stores the result, atomically:
// if another writer changes the job between the read and the write, fn runs
// again on the new state. fn must be free of side effects for that reason.
// An error from fn aborts the update and is returned wrapped (one wrapping
// job.ErrBadTransition also wraps ErrConflict). fn cannot change the ID,
// owner or creation time. A change to Progress is stored too; setting
// CancelRequested raises the cancel flag the worker polls.
func (s *Store) UpdateJob(ctx context.Context, id string, fn func(j *job.Job) error) (*job.Job, error) {
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		var out *job.Job
		var from job.Status
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			var err error
			out, from, err = s.updateOnce(ctx, tx, id, fn)
			return err
		}, jobKey(id))
		switch {
		case err == nil:
			s.settle(ctx, from, out)
			return out, nil
		case errors.Is(err, redis.TxFailedErr):
			if err := sleepJitter(ctx, attempt); err != nil {
				return nil, fmt.Errorf("store: update job %s: %w", id, err)
			}
		case errors.Is(err, job.ErrBadTransition):
			return nil, fmt.Errorf("store: update job %s: %w: %w", id, ErrConflict, err)
		default:
			return nil, fmt.Errorf("store: update job %s: %w", id, err)
		}
	}
	return nil, fmt.Errorf("store: update job %s: %w: still contended after %d attempts", id, ErrConflict, maxTxAttempts)
}

// updateOnce is one optimistic round of UpdateJob under WATCH; it returns
// the job written and the status it had before.
func (s *Store) updateOnce(ctx context.Context, tx *redis.Tx, id string, fn func(*job.Job) error) (*job.Job, job.Status, error) {
	jobs, err := s.loadJobs(ctx, tx, []string{id})
	if err != nil {
		return nil, "", err
	}
	j := jobs[0]
	if j == nil {
		return nil, "", ErrNotFound
	}
	before := *j
	if r := j.Progress.CurrentRun; r != nil {
		c := *r // fn may write through the pointer
		before.Progress.CurrentRun = &c
	}
	if err := fn(j); err != nil {
		return nil, "", err
	}
	j.ID, j.Owner, j.CreatedAt = before.ID, before.Owner, before.CreatedAt
	data, err := json.Marshal(j)
	if err != nil {
		return nil, "", fmt.Errorf("encode: %w", err)
	}
	if j.Status != before.Status {
		// In the index of the new status before the job has it (index.go);
		// settle removes the old entry once the change committed.
		if err := s.addStatusEntries(ctx, j, j.Status); err != nil {
			return nil, "", fmt.Errorf("index: %w", err)
		}
	}
	_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, jobKey(id), fieldJob, data)
		if !sameProgress(j.Progress, before.Progress) {
			s.setProgress(ctx, p, id, j.Progress)
		}
		if j.CancelRequested && !before.CancelRequested {
			p.Set(ctx, cancelKey(id), "1", s.retention)
		}
		s.touchJob(ctx, p, id)
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return j, before.Status, nil
}

// CancelRequested reports whether a cancel was requested for job id: one
// EXISTS, cheap enough for the worker to poll several times a second.
func (s *Store) CancelRequested(ctx context.Context, id string) (bool, error) {
	n, err := s.rdb.Exists(ctx, cancelKey(id)).Result()
	if err != nil {
		return false, fmt.Errorf("store: cancel flag of job %s: %w", id, err)
	}
	return n > 0, nil
}

// sleepJitter backs off after a lost optimistic round, so contending
// writers spread out instead of colliding again in lockstep.
func sleepJitter(ctx context.Context, attempt int) error {
	d := time.Duration(rand.IntN(1+min(attempt, 10))) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
