package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/webhook"
)

// ending says how end ends a job.
type ending struct {
	// hold is the attempt ending the job, which must still hold it; nil
	// when no attempt will run the job again (abandon).
	hold *hold
	// final is the progress to store; nil keeps the stored one.
	final *job.Progress
	// decide picks the terminal status and the failure's reason from the
	// job as stored and its runs. It runs inside the optimistic
	// transaction (maybe more than once) and may move j on its way there;
	// an error aborts the end and is returned.
	decide func(j *job.Job, runs []job.Run) (job.Status, string, error)
	// level and msg are the one log line of the end.
	level slog.Level
	msg   string
}

// end is the one place a job ends, whoever ends it: it loads the job's
// runs and its compare_to job once, analyzes them once, and stores the
// analysis with the terminal status in one transaction (refused when
// e.hold no longer holds the job), then appends job.finished, logs and
// notifies with that analysis. It returns the ended job; an error wrapping
// errNotifyLost means the job did end but its notice was not queued.
func (r *Runner) end(ctx context.Context, id string, e ending) (*job.Job, error) {
	write := func(ctx context.Context, fn func(context.Context) error) error { return fn(ctx) }
	if e.hold != nil {
		// The writes that end an attempt ride out a Redis restart.
		write = func(ctx context.Context, fn func(context.Context) error) error {
			return throughOutage(ctx, r.lease, fn)
		}
	}
	dctx, cancel := detached(ctx)
	defer cancel()
	var runs []job.Run
	var a *job.Analysis
	err := write(dctx, func(ctx context.Context) error {
		stored, err := r.st.GetJob(ctx, id)
		if err != nil {
			return err
		}
		if runs, err = r.st.Runs(ctx, id); err != nil {
			return err
		}
		base, err := loadBaseline(ctx, r.st, stored.Spec) // baseline.go
		if err != nil {
			return err
		}
		an := job.AnalyzeAgainst(stored.Spec, runs, base)
		a = &an
		return nil
	})
	switch {
	case err != nil && e.hold != nil:
		// The attempt is retried, and ends the job with its runs then.
		return nil, fmt.Errorf("worker: job %s: load runs to end it: %w", id, err)
	case err != nil:
		// Nothing will run the job again: it ends without an analysis
		// rather than hold its quota slot forever.
		r.log.Warn("worker: job ends without analysis", "job", id, "err", err)
		runs, a = nil, nil
	}
	var from, to job.Status
	var j *job.Job
	err = write(dctx, func(ctx context.Context) (err error) {
		j, err = r.st.UpdateJob(ctx, id, func(j *job.Job) error {
			from = j.Status
			var why string
			var err error
			if to, why, err = e.decide(j, runs); err != nil {
				return err
			}
			if e.final != nil {
				j.Progress = *e.final
			}
			now := time.Now().UTC()
			if e.hold != nil {
				return j.FinishAs(e.hold.attempt, to, why, a, now)
			}
			return j.Finish(to, why, a, now)
		})
		return err
	})
	if err != nil {
		if e.hold != nil {
			r.refused(e.hold, from, to, err)
		}
		return nil, err
	}
	ev := store.Finished{Status: j.Status, Verdict: j.Verdict, Error: j.Error, RunsDone: j.Progress.RunsDone}
	if err := r.st.AppendEvent(dctx, id, store.EventJobFinished, ev); err != nil {
		r.log.Warn("worker: append job.finished event", "job", id, "err", err)
	}
	r.log.Log(dctx, e.level, e.msg, "job", id, "status", j.Status, "verdict", j.Verdict, "runs", j.Progress.RunsDone, "error", j.Error)
	if err := r.notify(dctx, j, webhook.EventFor(j.Status)); err != nil {
		return j, fmt.Errorf("worker: job %s: %w: %w", id, errNotifyLost, err)
	}
	return j, nil
}

// endAs is a decide for an end known before the transaction.
func endAs(to job.Status, why string) func(*job.Job, []job.Run) (job.Status, string, error) {
	return func(*job.Job, []job.Run) (job.Status, string, error) { return to, why, nil }
}
