package jobend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// ErrNotifyLost is wrapped by End when the job did end but its end notice
// could not be queued.
var ErrNotifyLost = errors.New("jobend: end notice not queued")

// Store is what End needs; *store.Store implements it.
type Store interface {
	BaselineSource
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	AppendEvent(ctx context.Context, jobID string, typ string, data any) error
	// ReleaseTargets gives up the job's target leases (store/targetlease.go).
	ReleaseTargets(ctx context.Context, id string, hosts []string) error
}

// Notifier is told of the end; the worker's WebhookNotifier queues the
// job's webhook (it sends each event once, however often it is told).
type Notifier interface {
	Notify(ctx context.Context, j *job.Job, event string) error
}

// Ender ends jobs in one store, telling one notifier.
type Ender struct {
	st       Store
	notifier Notifier
	log      *slog.Logger
}

// New returns an Ender on st; notifier may be nil (no notice is sent: the
// worker taking the job's task sends it), log nil means slog.Default().
func New(st Store, notifier Notifier, log *slog.Logger) *Ender {
	if log == nil {
		log = slog.Default()
	}
	return &Ender{st: st, notifier: notifier, log: log}
}

// How says how End ends a job.
type How struct {
	// Fenced: only attempt number Attempt may end the job (job.FinishAs);
	// a later attempt holding it makes End fail with job.ErrStaleAttempt.
	Fenced  bool
	Attempt int
	// Final is the progress to store; nil keeps the stored one.
	Final *job.Progress
	// Decide picks the terminal status and a failure's reason from the job
	// as stored and its runs. It runs inside the optimistic transaction
	// (maybe more than once), may change j on its way there, and returns
	// status "" when the job does not end after all (j's changes are
	// stored, nothing else happens). An error aborts and is returned.
	Decide func(j *job.Job, runs []job.Run) (job.Status, string, error)
	// Retry wraps each store round trip (the worker rides out a Redis
	// restart with it); nil runs each once.
	Retry func(ctx context.Context, op func(context.Context) error) error
	// AnalysisOptional ends the job without an analysis when its runs
	// cannot be read, rather than failing: for a job nothing will run
	// again, which must not hold its quota slot forever.
	AnalysisOptional bool
	// Level and Msg are the end's one log line.
	Level slog.Level
	Msg   string
}

// Result is what End did: the job as stored, the status it was found in
// and the one Decide picked, and whether the job ended.
type Result struct {
	Job      *job.Job
	From, To job.Status
	Ended    bool
}

// End ends job id as how says (see the package doc). An error wrapping
// ErrNotifyLost comes with the ended job.
func (e *Ender) End(ctx context.Context, id string, how How) (Result, error) {
	retry := how.Retry
	if retry == nil {
		retry = func(ctx context.Context, op func(context.Context) error) error { return op(ctx) }
	}
	var runs []job.Run
	var a *job.Analysis
	err := retry(ctx, func(ctx context.Context) error {
		stored, err := e.st.GetJob(ctx, id)
		if err != nil {
			return err
		}
		if runs, err = e.st.Runs(ctx, id); err != nil {
			return err
		}
		an, err := Analyze(ctx, e.st, stored, runs)
		if err != nil {
			return err
		}
		a = &an
		return nil
	})
	switch {
	case err != nil && !how.AnalysisOptional:
		return Result{}, fmt.Errorf("jobend: job %s: load runs to end it: %w", id, err)
	case err != nil:
		e.log.Warn("jobend: job ends without analysis", "job", id, "err", err)
		runs, a = nil, nil
	}
	var res Result
	err = retry(ctx, func(ctx context.Context) (err error) {
		res.Job, err = e.st.UpdateJob(ctx, id, func(j *job.Job) error {
			res.From = j.Status
			to, why, err := how.Decide(j, runs)
			res.To = to
			if err != nil || to == "" {
				return err
			}
			if how.Final != nil {
				j.Progress = *how.Final
			}
			now := time.Now().UTC()
			if how.Fenced {
				err = j.FinishAs(how.Attempt, to, why, a, now)
			} else {
				err = j.Finish(to, why, a, now)
			}
			if err == nil && a != nil {
				// The runs were read: the ended job says what they did.
				j.Progress.Done(runs)
			}
			return err
		})
		return err
	})
	if err != nil {
		return res, err
	}
	if res.To == "" {
		return res, nil
	}
	res.Ended = true
	j := res.Job
	e.releaseTargets(ctx, j, retry)
	ev := store.Finished{Status: j.Status, Verdict: j.Verdict, Error: j.Error, RunsDone: j.Progress.RunsDone}
	if err := e.st.AppendEvent(ctx, id, job.EventFinished, ev); err != nil {
		e.log.Warn("jobend: append job.finished event", "job", id, "err", err)
	}
	e.log.Log(ctx, how.Level, how.Msg, "job", id, "status", j.Status, "verdict", j.Verdict, "runs", j.Progress.RunsDone, "error", j.Error)
	if e.notifier != nil {
		if err := e.notifier.Notify(ctx, j, job.EventFor(j.Status)); err != nil {
			return res, fmt.Errorf("jobend: job %s: %w: %w", id, ErrNotifyLost, err)
		}
	}
	e.findChangePoints(ctx, j) // changepoints.go
	return res, nil
}
