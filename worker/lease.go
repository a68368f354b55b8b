package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// Timings of the job lease.
const (
	// DefaultJobLease is how long an attempt may go without renewing its
	// job's lease before the job counts as crashed. asynq's own task
	// lease (30 s, then 30 s of grace, seen by a recoverer that runs once
	// a minute) gave a killed worker's job back a minute or more after the
	// kill; this one is renewed five times within it, so only an attempt
	// that misses four renewals in a row (a dead process, Redis out of
	// reach) loses it.
	DefaultJobLease = 10 * time.Second
	// leaseRenewals is how many renewals fit in one lease, and how many
	// times per lease the janitor looks for jobs whose lease ran out.
	leaseRenewals = 5
	// leaseWaitPoll is how often an attempt waiting for a lease that its
	// own task's previous attempt still holds looks again.
	leaseWaitPoll = 100 * time.Millisecond
)

// leaseStore is the store's side of job leases; *store.Store implements it.
type leaseStore interface {
	AcquireLease(ctx context.Context, id, holder string, ttl time.Duration) (bool, error)
	RenewLease(ctx context.Context, id, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, id, holder string) error
}

// errLeaseLost: the attempt's lease ran out or was taken while it ran, so
// another attempt may hold the job now; the sweep stops.
var errLeaseLost = errors.New("worker: job lease lost")

// workerID names this process in the holders of its leases: host, pid and
// a random part, since a pid comes back after a restart.
func workerID() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%s:%d:%04x", host, os.Getpid(), rand.Uint32()&0xffff)
}

// hold is one attempt's claim on a job: the lease it renews while it runs
// and, once begin started the job, the attempt number its writes carry.
type hold struct {
	id      string // the job
	holder  string // the lease's value: worker and attempt
	task    string // the asynq task the attempt runs under
	attempt int    // from job.Start; the fencing token of every transition

	st leaseStore
	ts targetStore
	// targets are the hosts whose leases the attempt took (exclusive.go)
	// and renews with the job's; nil when it took none.
	targets atomic.Pointer[[]string]
	ttl     time.Duration
	log     *slog.Logger
	ctx     context.Context // ends when the lease is lost or the attempt's context ends
	stop    context.CancelFunc
	lost    atomic.Bool
	done    chan struct{}
	every   time.Duration
}

// taskOf is the ID of the task ctx runs: a handler called outside asynq
// (tests, tools) runs as the job's own task.
func taskOf(ctx context.Context, jobID string) string {
	if id, ok := asynq.GetTaskID(ctx); ok && id != "" {
		return id
	}
	return jobID
}

// take acquires job id's lease for a new attempt under task. When a live
// attempt holds it, take returns nil, nil if that attempt runs another
// task: this one was superseded (a resume task took the job after this
// task's attempt died) and has nothing to do. It waits instead while the
// holder runs this very task: asynq handed the task out again while its
// previous attempt still stops, as a shutdown timeout does, and that
// attempt is about to hand the job back or, if it died, to let its
// lease run out.
func (r *Runner) take(ctx context.Context, id, task string) (*hold, error) {
	holder := fmt.Sprintf("%s/%d", r.id, r.seq.Add(1))
	deadline := time.Now().Add(r.lease + cleanupTimeout)
	var waited bool
	for {
		ok, err := r.st.AcquireLease(ctx, id, holder, r.lease)
		if err != nil {
			return nil, fmt.Errorf("worker: job %s: %w", id, err)
		}
		if ok {
			return r.keep(ctx, id, holder, task), nil
		}
		j, err := r.st.GetJob(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("worker: job %s: %w: %w", id, err, asynq.SkipRetry)
		}
		if err != nil {
			return nil, fmt.Errorf("worker: job %s: %w", id, err)
		}
		if j.CurrentTask() != task || j.Status.Terminal() {
			r.log.Info("worker: job held by another task's attempt; nothing to do", "job", id, "task", task, "held_by", j.Holder, "status", j.Status)
			return nil, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("worker: job %s: its lease is still held by %s", id, j.Holder)
		}
		if !waited {
			waited = true
			r.log.Info("worker: job held by this task's previous attempt; waiting for it to let go", "job", id, "task", task, "held_by", j.Holder)
		}
		t := time.NewTimer(leaseWaitPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("worker: job %s: waiting for its lease: %w", id, ctx.Err())
		case <-t.C:
		}
	}
}

// keep starts renewing a lease just acquired.
func (r *Runner) keep(ctx context.Context, id, holder, task string) *hold {
	h := &hold{id: id, holder: holder, task: task, st: r.st, ts: r.st, ttl: r.lease, log: r.log,
		every: r.lease / leaseRenewals, done: make(chan struct{})}
	h.ctx, h.stop = context.WithCancel(ctx)
	go h.renew()
	return h
}

// renew extends the lease every ttl/5 until release. A renewal that finds
// the lease gone, or no successful renewal for a whole ttl (Redis out of
// reach: the lease has run out there by now), loses it: ctx ends, so the
// load stops.
func (h *hold) renew() {
	defer close(h.done)
	tick := time.NewTicker(h.every)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(h.ctx, h.every)
		ok, err := h.st.RenewLease(ctx, h.id, h.holder, h.ttl)
		cancel()
		switch {
		case err == nil && ok:
			last = time.Now()
			if h.renewTargets() {
				continue
			}
		case err == nil:
			h.log.Error("worker: job lease lost: another attempt may hold the job", "job", h.id, "holder", h.holder, "attempt", h.attempt)
		case time.Since(last) < h.ttl:
			if h.ctx.Err() == nil {
				h.log.Warn("worker: renew job lease", "job", h.id, "err", err)
			}
			continue
		default:
			h.log.Error("worker: job lease ran out: Redis unreachable", "job", h.id, "holder", h.holder, "attempt", h.attempt, "err", err)
		}
		h.lost.Store(true)
		h.stop()
		return
	}
}

// release stops renewing and gives the lease up, after the attempt
// recorded how it ended.
func (h *hold) release(ctx context.Context) {
	h.stop()
	<-h.done
	if err := throughOutage(ctx, h.ttl, func(ctx context.Context) error {
		return h.st.ReleaseLease(ctx, h.id, h.holder)
	}); err != nil {
		h.log.Warn("worker: release job lease", "job", h.id, "err", err)
	}
}

// lostLease reports whether the lease was lost while the attempt ran.
func (h *hold) lostLease() bool { return h.lost.Load() }

// refused logs a transition that was not recorded, loudly: a worker that
// cannot record what it did is stale (another attempt holds the job),
// fighting the lifecycle, or cut off from Redis, and each is a bug or a
// fault to see, not only a line in the task's stored error.
func (r *Runner) refused(h *hold, from job.Status, to job.Status, err error) {
	r.log.Error("worker: job transition not recorded", "job", h.id, "from", from, "to", to,
		"attempt", h.attempt, "holder", h.holder, "task", h.task, "err", err)
}
