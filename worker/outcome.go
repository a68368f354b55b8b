package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// end records how the attempt ended and returns what asynq must do.
func (sw *sweep) end(err error) error {
	id := sw.job.ID
	switch {
	case err == nil:
		return sw.finish(func(_ *job.Job, runs []job.Run) (job.Status, string, error) {
			to, why := sw.outcome(runs)
			return to, why, nil
		})
	case errors.Is(err, errCanceled):
		return sw.finish(endAs(job.StatusCanceled, ""))
	case errors.As(err, new(*jobAborted)):
		return sw.finish(endAs(job.StatusFailed, err.Error()))
	case errors.Is(err, errNeverRuns), errors.Is(err, errShards):
		if ferr := sw.finish(endAs(job.StatusFailed, err.Error())); ferr != nil {
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
// succeeded otherwise. Errors under load are results, not failures. Only
// a succeeded job gets the verdict of its thresholds (job.Finish): a
// failed one had nothing to judge.
func (sw *sweep) outcome(runs []job.Run) (job.Status, string) {
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
		return job.StatusFailed, strings.Join(reasons, "; ")
	}
	return job.StatusSucceeded, ""
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

// finish ends the job (end.go) with the final progress, as decide
// says. An attempt that no longer holds the job records nothing: the
// attempt holding it finishes it.
func (sw *sweep) finish(decide func(*job.Job, []job.Run) (job.Status, string, error)) error {
	final := sw.idleProgress()
	_, err := sw.r.end(sw.ctx, sw.job.ID, ending{
		hold: sw.hold, final: &final, decide: decide, level: slog.LevelInfo, msg: "worker: job finished",
	})
	switch {
	case err == nil, errors.Is(err, job.ErrStaleAttempt):
		return nil
	case errors.Is(err, errNotifyLost):
		// Retried: the next attempt finds the job over and notifies again.
		return err
	default:
		return fmt.Errorf("worker: finish job %s: %w", sw.job.ID, err)
	}
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
	return r.end(ctx, id, ending{
		decide: func(j *job.Job, _ []job.Run) (job.Status, string, error) {
			switch {
			case j.Status.Terminal():
				return "", "", fmt.Errorf("%w: %s", errFinished, j.Status)
			case j.CancelRequested:
				return job.StatusCanceled, "", nil
			case j.Status == job.StatusQueued:
				// Handed back: the lifecycle has no queued -> failed, and an
				// attempt did take the job, so it passes through running.
				if err := j.Transition(job.StatusRunning, time.Now().UTC()); err != nil {
					return "", "", err
				}
			}
			return job.StatusFailed, why, nil
		},
		level: slog.LevelWarn, msg: "worker: gave up on job",
	})
}
