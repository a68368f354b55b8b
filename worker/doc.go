// Package worker runs benchmark jobs taken from the asynq "jobs" queue. A
// Worker wires an asynq server to the Runner, whose HandleJobRun executes
// one job's sweep: it walks the spec's schedule, runs each repeat of each
// point with internal/loadgen, stores every run the moment it ends, and
// moves the job through its lifecycle in internal/store.
//
// The parts, one per file: runner.go (the sweep, run by run), outcome.go
// (how an attempt ends: succeeded, failed, canceled or handed back),
// progress.go (live progress, written at most 4 times a second), cancel.go
// (a watcher that polls the job's cancel flag and stops the load within a
// second), server.go (asynq wiring, shutdown), log.go (asynq's logger on
// slog), janitor.go (ends the jobs whose task asynq archived without a
// handler, as after a worker died on the task's last attempt).
//
// Failure model. Every attempt starts by reading which runs are stored and
// skips them, so an attempt retried after a crash resumes where the dead
// one stopped and never counts a run twice (the store saves runs with
// HSETNX). Cancellation is the job's own flag, not asynq's CancelProcessing
// (which would retry the task): a canceled job ends canceled and keeps its
// finished runs. On shutdown the current run may finish within
// Config.ShutdownTimeout; the job is then handed back (status queued, task
// retried), and a run cut short is discarded, never stored. A spec that can
// never run fails the job and returns asynq.SkipRetry; a Redis error
// returns a plain error so asynq retries.
//
// The worker never imports echo; it talks to the API only through Redis.
package worker
