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
// WATCH/MULTI on the job's keys and retries on a conflicting write, so an API cancel and a
// worker's status change never overwrite each other. Runs are saved with
// HSETNX on their (point, repeat) key, so a retried worker attempt can never
// count a run twice. Progress lives in its own key, apart from the job, so
// its frequent writes never make an UpdateJob retry. The shards of a
// sharded run meet in a round of keys of their own (shards.go): a barrier,
// a start on Redis's clock, per-shard leases and results.
//
// Errors: ErrNotFound for a missing job, ErrConflict for a forbidden status
// change or a contention that outlasted the retries, ErrInvalidCursor for a
// malformed page cursor or event ID; redis.Nil never leaves the package.
// ErrUnavailable (an *UnavailableError naming the Condition) for Redis
// unreachable, refusing writes or not ready: Classify decides it, and a
// hook New adds to the client applies it to every command (unavailable.go).
// Every transaction and script stays in one Redis Cluster slot (hash tags
// per job and per key family, keys.go), so the store runs on one Redis,
// Sentinel or Cluster alike; a job and its index entries are kept
// consistent across slots by write order, not atomicity (index.go).
// MigrateKeys renames the keys of the layout before tags.
//
// AppendEvent also publishes the job's id on one pub/sub channel, which
// WatchEvents follows on a connection of its own (eventwatch.go), so an
// API process waits for every job's events on one connection instead of
// one pooled connection per open stream.
package store
