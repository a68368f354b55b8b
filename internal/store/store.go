package store

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
)

// Sentinel errors callers test with errors.Is.
var (
	// ErrNotFound: no job with that ID (never created, or expired).
	ErrNotFound = errcode.Sentinel(errcode.NotFound, "not found")
	// ErrConflict: the job already exists, the lifecycle forbids the change
	// (it also wraps job.ErrBadTransition then), or concurrent writers kept
	// changing the job for longer than UpdateJob retries.
	ErrConflict = errcode.Sentinel(errcode.Conflict, "it changed meanwhile; retry")
	// ErrInvalidCursor: a ListJobs cursor or a ReadEvents ID that the store
	// never handed out.
	ErrInvalidCursor = errcode.Sentinel(errcode.InvalidCursor, "the cursor is not one this service handed out; list again without it")
)

// DefaultRetention is how long a job's keys live after its last write when
// Options.Retention is zero.
const DefaultRetention = 30 * 24 * time.Hour

// Options configures a Store.
type Options struct {
	// Retention is how long a job and everything about it is kept after its
	// last write; zero means 30 days.
	Retention time.Duration
}

func (o Options) withDefaults() Options {
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	return o
}

// Store persists jobs, runs, progress and events in Redis. It is safe for
// concurrent use; all state is in Redis, so any number of API and worker
// processes may share it.
type Store struct {
	rdb       redis.UniversalClient
	retention time.Duration
	now       func() time.Time
	// fullyIndexed caches that the owners' status and label indexes
	// hold every job (listplan.go).
	fullyIndexed atomic.Bool
}

// New returns a Store on rdb, the process's shared client. It adds a hook
// to rdb that classifies every command's outage error (ErrUnavailable);
// the errors keep their chain, so other users of the client (asynq) see
// the same errors.Is answers as before.
func New(rdb redis.UniversalClient, o Options) *Store {
	o = o.withDefaults()
	rdb.AddHook(classifyHook{})
	return &Store{rdb: rdb, retention: o.Retention, now: time.Now}
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

// probeTTL keeps ProbeWrite's key from outliving the probes.
const probeTTL = 10 * time.Second

// ProbeWrite checks that Redis accepts a write, for readiness probes: a
// PING succeeds on a Redis that is out of memory, read-only or failing to
// persist, all of which refuse every job. It SETs one dedicated key with
// a short TTL, shared by every API replica.
func (s *Store) ProbeWrite(ctx context.Context) error {
	if err := s.rdb.Set(ctx, probeKey(), "1", probeTTL).Err(); err != nil {
		return fmt.Errorf("store: probe write: %w", err)
	}
	return nil
}

// touchJob queues the retention TTL on every key of job id, or its
// removal while the job is kept (keep.go).
func (s *Store) touchJob(ctx context.Context, pipe redis.Pipeliner, id string) {
	touchScript.Eval(ctx, pipe, append([]string{keepKey(id)}, jobKeys(id)...), s.retention.Milliseconds())
}

// touchIndexes queues the retention TTL on the indexes job j appears in,
// whatever its status; while any job is kept they do not expire
// (touchScript reads the kept set as a job's keep set).
func (s *Store) touchIndexes(ctx context.Context, pipe redis.Pipeliner, j *job.Job) {
	keys := []string{keptIndexKey(), allIndexKey(), ownerIndexKey(j.Owner), ownerNamesKey(j.Owner)}
	for _, st := range statuses() {
		keys = append(keys, statusIndexKey(st), ownerStatusIndexKey(j.Owner, st))
	}
	keys = append(keys, labelIndexKeys(j)...)
	touchScript.Eval(ctx, pipe, keys, s.retention.Milliseconds())
}

// mustExist returns ErrNotFound when the job hash is missing; writes to a
// job's other keys check it first, so they never create keys for a job
// that does not exist.
func (s *Store) mustExist(ctx context.Context, id string) error {
	n, err := s.rdb.Exists(ctx, jobKey(id)).Result()
	if err != nil {
		return fmt.Errorf("store: job %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("store: job %s: %w", id, ErrNotFound)
	}
	return nil
}
