package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// errTargetBusy: another job holds one of the job's target hosts (or
// waits for it ahead of this one). The job stays queued and its task is
// retried after targetWaitDelay, a retry asynq does not count (isFailure).
var errTargetBusy = errors.New("worker: target host busy")

// Timings of target leases.
const (
	// targetWaitDelay is how soon a job waiting for a target asks again;
	// asynq's scan of retries every handBackDelay adds up to as much.
	targetWaitDelay = handBackDelay
	// targetStaleLeases is how many job leases a waiting job may go
	// without asking before it loses its place in its hosts' queues until
	// it asks again: a canceled or stranded waiter must not hold a host
	// free for nobody, while one that asks every couple of seconds keeps
	// its place.
	targetStaleLeases = 3
)

// targetStore is the store's side of target leases; *store.Store
// implements it. The worker takes and renews them; jobend releases them
// at the job's end, or a crash leaves them to run out.
type targetStore interface {
	AcquireTargets(ctx context.Context, id string, hosts []string, ttl time.Duration, w store.TargetWait) (*store.TargetBusy, error)
	RenewTargets(ctx context.Context, id string, hosts []string, ttl time.Duration) (bool, error)
	ReleaseTargets(ctx context.Context, id string, hosts []string) error
}

// errRunAnyway: the job must go to begin although its targets are busy,
// which ends it without sending load (a cancel, a crash loop).
var errRunAnyway = errors.New("worker: job ends before its load")

// claimTargets takes the leases on every target host of the job h holds
// before begin starts it: the host's alone for an exclusive job, shared
// with other such jobs for one that opted out ("exclusive": false), which
// still keeps off a host an exclusive job holds. It returns an error
// wrapping errTargetBusy when a host is not to be had: the job is left
// queued with the reason, and its task is retried soon. A job already
// over, or that begin will end without load, takes nothing.
func (r *Runner) claimTargets(ctx context.Context, h *hold) error {
	j, err := r.st.GetJob(ctx, h.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil // begin says so
	case err != nil:
		return fmt.Errorf("worker: job %s: %w", h.id, err)
	case j.Status.Terminal():
		return nil
	}
	hosts := j.Spec.TargetHosts()
	busy, err := r.st.AcquireTargets(ctx, h.id, hosts, r.lease, store.TargetWait{
		Shared: !j.Spec.IsExclusive(), Order: j.CreatedAt, Stale: targetStaleLeases * r.lease})
	if err != nil {
		return fmt.Errorf("worker: job %s: %w", h.id, err)
	}
	if busy == nil {
		h.targets.Store(&hosts)
		return nil
	}
	return r.waitForTargets(ctx, h, j, busy)
}

// queuedReason says why job j waits for busy's host, in words for j's
// owner to read: the job in the way is named only when it is the owner's
// own, since another tenant's job ids are not theirs to see (with an id,
// a job's spec and results are a GET away in open mode, and its existence
// and timing leak in any mode). A holder that cannot be read is
// "another job".
func (r *Runner) queuedReason(ctx context.Context, j *job.Job, busy *store.TargetBusy) string {
	other := "another job"
	if holder, err := r.st.GetJob(ctx, busy.Job); err == nil && holder.Owner == j.Owner {
		other = "job " + busy.Job
	}
	if busy.Ahead {
		return fmt.Sprintf("waiting for target %s: %s, submitted earlier, waits for it too", busy.Host, other)
	}
	return fmt.Sprintf("waiting for target %s, held by %s", busy.Host, other)
}

// waitForTargets leaves the job queued with the reason busy says (in
// words for its owner; the log names the job in the way), and returns
// errTargetBusy. A job left running by an attempt that died goes back to
// queued, its crash counted as a take-over counts it, since its hosts
// went to another job when its leases ran out.
func (r *Runner) waitForTargets(ctx context.Context, h *hold, seen *job.Job, busy *store.TargetBusy) error {
	reason := r.queuedReason(ctx, seen, busy)
	if seen.Status == job.StatusQueued && seen.QueuedReason == reason {
		return fmt.Errorf("worker: job %s: %s: %w", h.id, reason, errTargetBusy)
	}
	_, err := r.st.UpdateJob(ctx, h.id, func(j *job.Job) error {
		switch {
		case j.Status.Terminal(), j.CancelRequested:
			return errRunAnyway
		case j.Status == job.StatusRunning:
			if j.CountCrash(r.crashes) != nil {
				return errRunAnyway // begin fails it, saying why
			}
			if err := j.Transition(job.StatusQueued, time.Now().UTC()); err != nil {
				return err
			}
			j.Progress.RequestsDone, j.Progress.CurrentRPS = 0, 0
		}
		j.QueuedReason = reason
		return nil
	})
	switch {
	case errors.Is(err, errRunAnyway):
		return nil
	case err != nil:
		return fmt.Errorf("worker: job %s: record why it waits: %w", h.id, err)
	}
	r.log.Info("worker: job waits for its target", "job", h.id, "host", busy.Host, "in_the_way", busy.Job, "ahead", busy.Ahead, "was", seen.Status)
	return fmt.Errorf("worker: job %s: %s: %w", h.id, reason, errTargetBusy)
}

// renewTargets extends the target leases the attempt holds, with its job
// lease, and reports whether they are still the job's. An error is only
// logged: a Redis out of reach for a whole lease loses the job lease too.
func (h *hold) renewTargets() bool {
	hosts := h.targets.Load()
	if hosts == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(h.ctx, h.every)
	defer cancel()
	ok, err := h.ts.RenewTargets(ctx, h.id, *hosts, h.ttl)
	switch {
	case err != nil:
		if h.ctx.Err() == nil {
			h.log.Warn("worker: renew target leases", "job", h.id, "err", err)
		}
		return true
	case !ok:
		h.log.Error("worker: target lease lost: an exclusive job loads one of this job's hosts", "job", h.id, "hosts", *hosts, "attempt", h.attempt)
	}
	return ok
}

// dropTargets gives up the target leases of an attempt whose job did not
// start after all (canceled meanwhile, or its start not recorded), so the
// next job waiting for a host need not wait for them to run out.
func (r *Runner) dropTargets(ctx context.Context, h *hold) {
	hosts := h.targets.Swap(nil)
	if hosts == nil {
		return
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	if err := r.st.ReleaseTargets(ctx, h.id, *hosts); err != nil {
		r.log.Warn("worker: release target leases", "job", h.id, "err", err)
	}
}
