package worker

import (
	"context"
	"log/slog"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobend"
)

// ending says how end ends a job.
type ending struct {
	// hold is the attempt ending the job, which must still hold it; nil
	// when no attempt will run the job again (abandon).
	hold *hold
	// final is the progress to store; nil keeps the stored one.
	final *job.Progress
	// decide picks the terminal status and the failure's reason (see
	// jobend.How.Decide).
	decide func(j *job.Job, runs []job.Run) (job.Status, string, error)
	// level and msg are the one log line of the end.
	level slog.Level
	msg   string
}

// end ends job id through jobend, the one place a job ends. An attempt
// ends it fenced by its number, riding out a Redis restart
// (throughOutage); a job no attempt will run again ends even when its
// runs cannot be read. It returns the ended job; an error wrapping
// errNotifyLost means the job did end but its notice was not queued.
func (r *Runner) end(ctx context.Context, id string, e ending) (*job.Job, error) {
	ctx, cancel := detached(ctx)
	defer cancel()
	how := jobend.How{Final: e.final, Decide: e.decide, Level: e.level, Msg: e.msg}
	if e.hold != nil {
		how.Fenced, how.Attempt = true, e.hold.attempt
		how.Retry = func(ctx context.Context, op func(context.Context) error) error {
			return throughOutage(ctx, r.lease, op)
		}
	} else {
		how.AnalysisOptional = true
	}
	res, err := r.ender.End(ctx, id, how)
	if err != nil && e.hold != nil && res.From != "" {
		r.refused(e.hold, res.From, res.To, err)
	}
	return res.Job, err
}

// endAs is a decide for an end known before the transaction.
func endAs(to job.Status, why string) func(*job.Job, []job.Run) (job.Status, string, error) {
	return func(*job.Job, []job.Run) (job.Status, string, error) { return to, why, nil }
}
