package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/webhook"
)

// end records how the attempt ended and returns what asynq must do.
func (sw *sweep) end(err error) error {
	id := sw.job.ID
	switch {
	case err == nil:
		status, why, verdict, oerr := sw.outcome()
		if oerr != nil {
			return fmt.Errorf("worker: job %s: %w", id, oerr)
		}
		return sw.finish(status, why, verdict)
	case errors.Is(err, errCanceled):
		return sw.finish(job.StatusCanceled, "", "")
	case errors.Is(err, errNeverRuns):
		if ferr := sw.finish(job.StatusFailed, err.Error(), ""); ferr != nil {
			return ferr // retried: the next attempt fails it again
		}
		return fmt.Errorf("worker: job %s: %w: %w", id, err, asynq.SkipRetry)
	case errors.Is(err, errInterrupted), errors.Is(err, errLeaseLost):
		return sw.handBack()
	default: // Redis or the engine: queued again until asynq's retry resumes it
		return sw.r.handBack(sw.ctx, sw.hold, sw.idleProgress(), err)
	}
}

// outcome decides a completed sweep's status from every stored run, this
// attempt's and earlier ones': failed when no run of some target got a
// single connection through (it could not be benchmarked at all),
// succeeded otherwise. Errors under load are results, not failures. A
// succeeded job also gets the verdict of its thresholds over every run; a
// failed one has none (there was nothing to judge).
func (sw *sweep) outcome() (status job.Status, why, verdict string, err error) {
	ctx, cancel := detached(sw.ctx)
	defer cancel()
	runs, err := sw.r.st.Runs(ctx, sw.job.ID)
	if err != nil {
		return "", "", "", err
	}
	type tally struct {
		runs, refused int
		why           string
	}
	per := map[string]*tally{}
	for _, run := range runs {
		t := per[run.Target]
		if t == nil {
			t = &tally{}
			per[run.Target] = t
		}
		t.runs++
		if why := unreachable(run.Result); why != "" {
			t.refused++
			t.why = why
		}
	}
	var reasons []string
	seen := map[string]bool{}
	for _, p := range sw.points { // in the spec's target order
		if t := per[p.Target]; t != nil && !seen[p.Target] && t.refused == t.runs {
			reasons = append(reasons, fmt.Sprintf("target %q could not be reached in any of its %d runs: %s", p.Target, t.runs, t.why))
		}
		seen[p.Target] = true
	}
	if len(reasons) > 0 {
		return job.StatusFailed, strings.Join(reasons, "; "), "", nil
	}
	base, err := sw.baseline(ctx) // baseline.go: the compare_to job's runs
	if err != nil {
		return "", "", "", err
	}
	return job.StatusSucceeded, "", job.AnalyzeAgainst(sw.job.Spec, runs, base).Verdict.Result, nil
}

// unreachable says why a run never got a connection through, or "" when
// it did: aborted as ab aborts on a refused first connection, or (targets
// that never abort) nothing completed and every failure was a connect.
func unreachable(res *abreport.Report) string {
	switch {
	case res == nil || res.CompleteRequests > 0:
		return ""
	case res.Aborted != "":
		return res.Aborted
	case res.FailedRequests > 0 && res.Failed.Connect == res.FailedRequests:
		return fmt.Sprintf("all %d connections failed", res.FailedRequests)
	default:
		return ""
	}
}

// finish moves the job to its terminal status with the final progress and
// verdict ("" for none decided), and ends its event stream. An attempt
// that no longer holds the job records nothing: the attempt holding it
// finishes it.
func (sw *sweep) finish(status job.Status, why, verdict string) error {
	final := sw.idleProgress()
	var from job.Status
	var j *job.Job
	err := throughOutage(sw.ctx, sw.r.lease, func(ctx context.Context) (err error) {
		j, err = sw.r.st.UpdateJob(ctx, sw.job.ID, func(j *job.Job) error {
			from = j.Status
			if err := j.TransitionAs(sw.hold.attempt, status, time.Now().UTC()); err != nil {
				return err
			}
			j.Progress, j.Error, j.Verdict = final, why, verdict
			return nil
		})
		return err
	})
	ctx, cancel := detached(sw.ctx)
	defer cancel()
	if err != nil {
		sw.r.refused(sw.hold, from, status, err)
		if errors.Is(err, job.ErrStaleAttempt) {
			return nil
		}
		return fmt.Errorf("worker: finish job %s as %s: %w", sw.job.ID, status, err)
	}
	ev := store.Finished{Status: j.Status, Verdict: j.Verdict, Error: j.Error, RunsDone: final.RunsDone}
	if err := sw.r.st.AppendEvent(ctx, sw.job.ID, store.EventJobFinished, ev); err != nil {
		sw.r.log.Warn("worker: append job.finished event", "job", sw.job.ID, "err", err)
	}
	sw.r.log.Info("worker: job finished", "job", sw.job.ID, "status", status, "verdict", verdict, "runs", final.RunsDone, "error", why)
	if err := sw.r.notify(ctx, j, webhook.EventFor(j.Status)); err != nil {
		// Retried: the next attempt finds the job over and notifies again.
		return fmt.Errorf("worker: job %s: %w: %w", sw.job.ID, errNotifyLost, err)
	}
	return nil
}

// handBack returns a running job to the queue; asynq retries the task (or
// has requeued it already, when it aborted the attempt) and the next
// attempt skips the stored runs. The partial run, if any, was discarded.
func (sw *sweep) handBack() error {
	return sw.r.handBack(sw.ctx, sw.hold, sw.idleProgress(), nil)
}

// handBack queues the job h holds again, with progress final, before h's
// lease is given up, so no attempt finds it running without a live lease
// and resumes it as crashed. It returns ErrHandedBack, or cause when the
// attempt ends in an error asynq retries (and counts). An attempt that no
// longer holds the job gives nothing back, and returns nil: its task is
// done, the job is another attempt's.
func (r *Runner) handBack(ctx context.Context, h *hold, final job.Progress, cause error) error {
	var from job.Status
	err := throughOutage(ctx, r.lease, func(ctx context.Context) error {
		_, err := r.st.UpdateJob(ctx, h.id, func(j *job.Job) error {
			from = j.Status
			if j.Attempt == h.attempt && j.Status != job.StatusRunning {
				return nil // nothing to give back
			}
			j.Progress = final
			return j.TransitionAs(h.attempt, job.StatusQueued, time.Now().UTC())
		})
		return err
	})
	switch {
	case errors.Is(err, job.ErrStaleAttempt):
		r.refused(h, from, job.StatusQueued, err)
		return nil
	case err != nil:
		r.refused(h, from, job.StatusQueued, err)
		// Left running: the job is resumed as after a crash.
		return fmt.Errorf("worker: job %s: %w (hand-back not recorded: %w)", h.id, ErrHandedBack, err)
	}
	r.log.Info("worker: job handed back", "job", h.id, "attempt", h.attempt, "runs_stored", final.RunsDone, "cause", cause)
	if cause != nil {
		return fmt.Errorf("worker: job %s: %w", h.id, cause)
	}
	return fmt.Errorf("worker: job %s: %w", h.id, ErrHandedBack)
}

// idleProgress is the progress between runs: runs done, nothing current.
func (sw *sweep) idleProgress() job.Progress {
	p := sw.progress.current()
	p.RunsDone, p.CurrentRun, p.RequestsDone, p.CurrentRPS = sw.stored, nil, 0, 0
	return p
}

// lastAttempt reports whether the task running under ctx has no retry
// left: asynq archives it after any error, retried or not.
func lastAttempt(ctx context.Context) bool {
	retried, ok1 := asynq.GetRetryCount(ctx)
	maxRetry, ok2 := asynq.GetMaxRetry(ctx)
	return ok1 && ok2 && retried >= maxRetry
}

// giveUp fails job id after its task's last attempt ended in cause, an
// error asynq would otherwise retry (a hand-back included): asynq archives
// the task instead, and a job left queued or running would hold its quota
// slot forever and never send job.failed. A job whose cancel was requested
// ends canceled. It returns cause wrapped in asynq.SkipRetry once the job
// is recorded as over.
func (r *Runner) giveUp(ctx context.Context, id string, cause error) error {
	ctx, cancel := detached(ctx)
	defer cancel()
	retried, _ := asynq.GetRetryCount(ctx)
	maxRetry, _ := asynq.GetMaxRetry(ctx)
	why := fmt.Sprintf("gave up on attempt %d of %d: %v", retried+1, maxRetry+1, cause)
	_, err := r.abandon(ctx, id, why)
	switch {
	case err == nil, errors.Is(err, errFinished), errors.Is(err, errNotifyLost):
		// Over: ended meanwhile (and notified by whoever ended it), or
		// ended here; a lost notice is logged, no retry is left to resend it.
		return fmt.Errorf("worker: job %s: %w: %w", id, cause, asynq.SkipRetry)
	default:
		r.log.Error("worker: give up on job", "job", id, "cause", cause, "err", err)
		return fmt.Errorf("worker: job %s: %w (and failing it: %v)", id, cause, err)
	}
}

// abandon ends job id, which no attempt will run any more, as failed with
// why (canceled when its cancel was requested), ends its event stream and
// tells the notifier. giveUp calls it on a task's last attempt, the
// janitor for a task archived without one (janitor.go). It returns
// errFinished when the job had ended already: the check and the write are
// one optimistic transaction, so of several callers racing on one job
// exactly one ends it and notifies. An error wrapping errNotifyLost means
// the job did end but its notice was not queued.
func (r *Runner) abandon(ctx context.Context, id, why string) (*job.Job, error) {
	now := time.Now().UTC()
	j, err := r.st.UpdateJob(ctx, id, func(j *job.Job) error {
		to := job.StatusFailed
		switch {
		case j.Status.Terminal():
			return fmt.Errorf("%w: %s", errFinished, j.Status)
		case j.CancelRequested:
			to = job.StatusCanceled
		case j.Status == job.StatusQueued:
			// Handed back: the lifecycle has no queued -> failed, and an
			// attempt did take the job, so it passes through running.
			if err := j.Transition(job.StatusRunning, now); err != nil {
				return err
			}
		}
		if err := j.Transition(to, now); err != nil {
			return err
		}
		if to == job.StatusFailed {
			j.Error = why
		}
		j.Progress.CurrentRun, j.Progress.RequestsDone, j.Progress.CurrentRPS = nil, 0, 0
		return nil
	})
	if err != nil {
		return nil, err
	}
	ev := store.Finished{Status: j.Status, Error: j.Error, RunsDone: j.Progress.RunsDone}
	if err := r.st.AppendEvent(ctx, id, store.EventJobFinished, ev); err != nil {
		r.log.Warn("worker: append job.finished event", "job", id, "err", err)
	}
	r.log.Warn("worker: gave up on job", "job", id, "status", j.Status, "error", why)
	if err := r.notify(ctx, j, webhook.EventFor(j.Status)); err != nil {
		return j, fmt.Errorf("worker: job %s: %w: %w", id, errNotifyLost, err)
	}
	return j, nil
}
