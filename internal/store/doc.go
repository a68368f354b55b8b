// Package store is benchq's only door to Redis for its own data: jobs,
// their runs, live progress, cancel flags and event streams (asynq keeps its
// task keys itself). The API and the worker call it; neither builds a key.
//
// Every key lives under the "benchq:" prefix and is built in keys.go, which
// also documents the layout (target leases: targetkeys.go). Each job's keys carry the retention TTL,
// refreshed on every write, so a finished job disappears by itself after
// Options.Retention; the list indexes carry the same TTL, refreshed whenever
// a job is created or updated, and forget expired jobs lazily.
//
// Concurrency is optimistic: UpdateJob (through which a cancel goes too) runs under
// WATCH/MULTI and retry on a conflicting write, so an API cancel and a
// worker's status change never overwrite each other. Runs are saved with
// HSETNX on their (point, repeat) key, so a retried worker attempt can never
// count a run twice. Progress lives in its own key, apart from the job, so
// its frequent writes never make an UpdateJob retry.
//
// Errors: ErrNotFound for a missing job, ErrConflict for a forbidden status
// change or a contention that outlasted the retries, ErrInvalidCursor for a
// malformed page cursor or event ID; redis.Nil never leaves the package.
// ErrUnavailable (an *UnavailableError naming the Condition) for Redis
// unreachable, refusing writes or not ready: Classify decides it, and a
// hook New adds to the client applies it to every command (unavailable.go).
// Transactions span a job's keys and the global indexes, so the store needs
// one Redis (standalone or behind Sentinel), not Redis Cluster.
package store
