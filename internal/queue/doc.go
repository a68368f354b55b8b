// Package queue names benchq's asynq task types and queues and builds their
// tasks, so the API (which enqueues) and the worker (which handles) agree on
// them in one place. A job:run task carries only the job's ID: the spec and
// the runs already done live in the store, which is what lets a retried
// attempt resume instead of starting over. A job:shard task names one
// shard of one try at a sharded run; it sits on its own queue, served
// first, and is never retried. It knows nothing of HTTP or of
// how a job runs. Enqueue classifies a failed enqueue the way the store
// classifies its errors, so a Redis outage reads the same from both.
package queue
