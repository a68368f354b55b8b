// Package worker runs benchmark jobs taken from the asynq "jobs" queue. A
// Worker wires an asynq server to the Runner, whose HandleJobRun executes
// one job's sweep: it walks the spec's schedule, runs each repeat of each
// point with internal/loadgen, stores every run the moment it ends, and
// moves the job through its lifecycle in internal/store.
//
// The parts, one per file: runner.go (the sweep, run by run), outcome.go
// (how an attempt ends: succeeded, failed, canceled or handed back),
// end.go (every end of a job, through internal/jobend),
// progress.go (live progress, written at most 4 times a second),
// intervals.go (each run's timeline intervals as they close, coalesced
// into run.intervals stream events and capped per run), cancel.go
// (a watcher that polls the job's cancel flag and stops the load within a
// second), server.go (asynq wiring, shutdown), log.go (asynq's logger on
// slog), lease.go (the job lease an attempt holds and renews while it
// runs), exclusive.go (the leases on the job's target hosts, taken before
// it starts; a job whose host another job holds waits queued), janitor.go
// (resumes the jobs whose lease ran out, and ends the jobs whose task
// asynq archived without a handler), coordinate.go (a sharded run as its
// coordinator sees it: the round, the barrier, the merge, the redo),
// shard.go (one shard wherever it runs, and the job:shard handler),
// clock.go (a shard's clock against Redis's), monitor.go (the target's
// metrics endpoint scraped beside each run, internal/monitor).
//
// Failure model. Every attempt starts by reading which runs are stored and
// skips them, so an attempt retried after a crash resumes where the dead
// one stopped and never counts a run twice (the store saves runs with
// HSETNX). An attempt holds the job's lease and writes every transition
// under its attempt number (job.Start, job.TransitionAs), so a stale
// attempt records nothing; a running job whose lease ran out is resumed by
// a task of its own within seconds. A job whose workers died more than
// Config.CrashRetries times in a row with no run stored between deaths,
// or more than Config.CrashLimit times in all, is failed. Cancellation is the job's own
// flag, not asynq's CancelProcessing (which would retry the task): a
// canceled job ends canceled and keeps its finished runs. On shutdown the current run may finish within
// Config.ShutdownTimeout; the job is then handed back (status queued, task
// retried), and a run cut short is discarded, never stored. A spec that can
// never run fails the job and returns asynq.SkipRetry; a Redis error
// queues the job again and returns a plain error so asynq retries.
//
// The worker never imports echo; it talks to the API only through Redis.
package worker
