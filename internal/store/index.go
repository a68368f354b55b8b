package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// A job and its index entries live in different Redis Cluster slots (the
// job's tag and {jobs}), so no transaction covers both. Writers keep one
// invariant instead: a job is always in the index of its status. An entry
// is added before the job is written (CreateJob, a status change in
// UpdateJob) and the entry of the old status is removed after, so a crash
// or an outage between the steps leaves an extra entry, never a missing
// one. Readers take an entry only when it agrees with its job, and drop
// it only when no writer in flight can still make it agree.

// indexGrace is how old an entry whose job is missing must be before a
// reader drops it: younger ones may belong to a CreateJob between its
// index step and its job step.
const indexGrace = time.Minute

// entryKind is what a reader makes of one index entry.
type entryKind int

const (
	entryLive    entryKind = iota // the entry agrees with its job
	entryPending                  // disagrees, but a writer in flight may still make it agree: skip it
	entryGone                     // its job expired or was never stored: drop it from every index
	entryStray                    // left by a write cut short: drop it from this index
)

// classify judges member m of the index of status st ("" for the all and
// owner indexes) against its job j, nil when the job does not exist.
func (s *Store) classify(m string, j *job.Job, st job.Status) entryKind {
	switch {
	case j == nil:
		if memberTime(m).Before(s.now().Add(-indexGrace)) {
			return entryGone
		}
		return entryPending
	case m != indexMember(j):
		// A CreateJob that lost to an existing job of the same ID listed
		// it under its own creation time; the job's time never changes.
		return entryStray
	case st != "" && j.Status != st:
		// A terminal job changes no more, so no status change in flight
		// can still move it into st.
		if j.Status.Terminal() {
			return entryStray
		}
		return entryPending
	}
	return entryLive
}

// memberTime is the creation time an index member starts with.
func memberTime(m string) time.Time {
	ms, err := strconv.ParseInt(m[:min(len(m), msDigits)], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// listJob queues the entries of a new job in every index it belongs to,
// trims entries long past the retention, and refreshes the indexes' TTL:
// one MULTI, as every index shares one slot.
func (s *Store) listJob(ctx context.Context, j *job.Job) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		s.queueListing(ctx, p, j)
		return nil
	})
	return err
}

// queueListing queues listJob's commands on p.
func (s *Store) queueListing(ctx context.Context, p redis.Pipeliner, j *job.Job) {
	member := indexMember(j)
	horizon := "(" + timePrefix(s.now().Add(-2*s.retention))
	keys := indexKeys(j, j.Status)
	for _, idx := range keys {
		p.ZAdd(ctx, idx, redis.Z{Member: member})
	}
	p.HSet(ctx, ownerNamesKey(j.Owner), member, listedName(j))
	// Jobs long expired, but the kept ones (keep.go); their names first,
	// found by their entries in the owner's index.
	trimNamesScript.Eval(ctx, p, []string{keptIndexKey(), ownerIndexKey(j.Owner), ownerNamesKey(j.Owner)}, horizon)
	trimScript.Eval(ctx, p, append([]string{keptIndexKey()}, keys...), horizon)
	s.touchIndexes(ctx, p, j)
}

// listedName is job j's name as the names index holds it.
func listedName(j *job.Job) string { return strings.ToLower(j.Spec.Name) }

// settle finishes an UpdateJob that moved job j from status from: the
// entry of the old status goes, the indexes' TTL is refreshed, and a job
// that ended gives its active-job slot back. The job is already written,
// so whatever of this a Redis outage prevents is repaired, not undone:
// readers drop the old entry once the job is terminal (classify), and
// ReserveActive reclaims the slot of a finished job.
func (s *Store) settle(ctx context.Context, from job.Status, j *job.Job) {
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if j.Status != from {
			for _, idx := range statusIndexKeys(j, from) {
				p.ZRem(ctx, idx, indexMember(j))
			}
		}
		if j.Status.Terminal() && !from.Terminal() {
			p.ZRem(ctx, activeJobsKey(j.Owner), j.ID)
		}
		s.touchIndexes(ctx, p, j)
		return nil
	})
	if j.Status.Terminal() && !from.Terminal() {
		// Best effort, as the rest: a failure leaves the previous
		// latest kept, and this one expiring with the retention.
		_ = s.keepLatest(ctx, j)
	}
	if j.Status == from || from.Terminal() {
		return
	}
	// Another update may have moved the job back into from meanwhile (a
	// hand-back and the next attempt's start), its entry added before the
	// removal above: put it back then.
	cur, err := s.loadJobs(ctx, s.rdb, []string{j.ID})
	if err == nil && cur[0] != nil && cur[0].Status == from {
		_ = s.addStatusEntries(ctx, j, from)
	}
}

// addStatusEntries adds job j to the indexes of status st, in one MULTI
// (they share a slot).
func (s *Store) addStatusEntries(ctx context.Context, j *job.Job, st job.Status) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, idx := range statusIndexKeys(j, st) {
			p.ZAdd(ctx, idx, redis.Z{Member: indexMember(j)})
		}
		return nil
	})
	return err
}
