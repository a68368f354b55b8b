package job

import (
	"fmt"
	"time"
)

// New returns a queued job for a spec that has been defaulted and
// validated, with its run count known for progress.
func New(id, owner string, spec Spec, now time.Time) *Job {
	return &Job{
		ID:        id,
		Owner:     owner,
		Spec:      spec,
		Status:    StatusQueued,
		CreatedAt: now,
		Progress:  Progress{RunsTotal: len(spec.Schedule())},
	}
}

// next lists the statuses each status may move to. running
// -> queued is a worker handing the job back on shutdown; it runs again
// later and skips the runs already stored.
func next(from Status) []Status {
	switch from {
	case StatusQueued:
		return []Status{StatusRunning, StatusCanceled}
	case StatusRunning:
		return []Status{StatusSucceeded, StatusFailed, StatusCanceled, StatusQueued}
	default:
		return nil // terminal, or unknown
	}
}

// Transition moves j to status to at time now, or returns an error
// wrapping ErrBadTransition and leaves j unchanged. The first move to
// running sets StartedAt (a job handed back keeps it); a terminal status
// sets FinishedAt.
func (j *Job) Transition(to Status, now time.Time) error {
	if !canMove(j.Status, to) {
		return fmt.Errorf("%w: %s -> %s", ErrBadTransition, j.Status, to)
	}
	if to == StatusRunning && j.StartedAt == nil {
		j.StartedAt = &now
	}
	if to.Terminal() {
		j.FinishedAt = &now
	}
	if to == StatusQueued {
		j.Progress.CurrentRun = nil
	} else {
		j.QueuedReason = ""
	}
	j.Status = to
	return nil
}

func canMove(from, to Status) bool {
	for _, s := range next(from) {
		if s == to {
			return true
		}
	}
	return false
}

// CrashBudget bounds how often a job whose worker died is resumed. A
// death counts against Stalled only when no run was stored since the one
// before (or since the job started): a job whose workers die while it
// still gets runs stored is making progress and is resumed, one that kills
// every worker before a run ends is not. Total caps the deaths whatever
// the progress, so a job that kills its worker after every run still ends.
type CrashBudget struct {
	Stalled int // deaths in a row, no run stored between them, resumed after
	Total   int // deaths in all resumed after
}

// CrashLoop says why j, left running by an attempt that died, is not to be
// resumed under b ("" when it is): the death that left it running would
// pass the budget. j.Progress.RunsDone must be the runs stored now, as the
// store reads it.
func (j *Job) CrashLoop(b CrashBudget) string {
	stalled := j.stalledAfterDeath()
	switch {
	case stalled > b.Stalled:
		return fmt.Sprintf("the worker running it died %d times in a row with no run stored in between (attempt %d last), and a job is resumed after at most %d such deaths",
			stalled, j.Attempt, b.Stalled)
	case j.Crashes+1 > b.Total:
		return fmt.Sprintf("the worker running it died %d times (attempt %d last), and a job is resumed after at most %d deaths in all, whatever its runs stored between them",
			j.Crashes+1, j.Attempt, b.Total)
	}
	return ""
}

// stalledAfterDeath is StalledCrashes once the death that left j running
// is counted: one more, or one when runs were stored since the last.
func (j *Job) stalledAfterDeath() int {
	if j.Progress.RunsDone > j.RunsAtCrash {
		return 1
	}
	return j.StalledCrashes + 1
}

// CountCrash counts the death of the attempt that left j running, or
// returns an error wrapping ErrCrashLoop saying why the job is not to be
// resumed (CrashLoop) and leaves j unchanged.
func (j *Job) CountCrash(b CrashBudget) error {
	if why := j.CrashLoop(b); why != "" {
		return fmt.Errorf("%w: %s", ErrCrashLoop, why)
	}
	j.StalledCrashes = j.stalledAfterDeath()
	j.Crashes++
	j.RunsAtCrash = j.Progress.RunsDone
	return nil
}

// Start makes a new attempt, held by holder under asynq task task, the one
// that runs j, and returns its number: the fencing token the attempt gives
// TransitionAs. The caller holds the job's lease, so no other attempt is
// alive. A queued job moves to running. A running one was left so by an
// attempt that died holding it (its lease ran out): it is taken over, and
// the death counted (CountCrash); past the budget Start fails with an
// error wrapping ErrCrashLoop that says why, and leaves j's status alone
// for the caller to fail the job. Any other status is ErrBadTransition.
func (j *Job) Start(holder, task string, budget CrashBudget, now time.Time) (int, error) {
	switch j.Status {
	case StatusQueued:
		if err := j.Transition(StatusRunning, now); err != nil {
			return 0, err
		}
	case StatusRunning:
		if err := j.CountCrash(budget); err != nil {
			return 0, err
		}
		j.Progress.CurrentRun, j.Progress.RequestsDone, j.Progress.CurrentRPS = nil, 0, 0
	default:
		return 0, fmt.Errorf("%w: %s -> %s", ErrBadTransition, j.Status, StatusRunning)
	}
	j.Attempt++
	j.Holder, j.Task = holder, task
	return j.Attempt, nil
}

// TransitionAs is Transition on behalf of attempt number attempt (from
// Start): when another attempt started since, it fails with an error
// wrapping ErrStaleAttempt and leaves j unchanged.
func (j *Job) TransitionAs(attempt int, to Status, now time.Time) error {
	if err := j.heldBy(attempt, to); err != nil {
		return err
	}
	return j.Transition(to, now)
}

// FinishAs is Finish on behalf of attempt number attempt, refused as
// TransitionAs refuses.
func (j *Job) FinishAs(attempt int, to Status, why string, a *Analysis, now time.Time) error {
	if err := j.heldBy(attempt, to); err != nil {
		return err
	}
	return j.Finish(to, why, a, now)
}

// heldBy fails with an error wrapping ErrStaleAttempt unless attempt is
// the one holding j, which asks to move it to to.
func (j *Job) heldBy(attempt int, to Status) error {
	if j.Attempt != attempt {
		return fmt.Errorf("%w: attempt %d asked for %s -> %s, but attempt %d (%s) holds it",
			ErrStaleAttempt, attempt, j.Status, to, j.Attempt, j.Holder)
	}
	return nil
}

// CurrentTask is the ID of the asynq task whose attempt holds j, or last
// did; a task with another ID was superseded and has nothing to run.
func (j *Job) CurrentTask() string {
	if j.Task == "" {
		return j.ID
	}
	return j.Task
}

// Finish ends j in status to with the analysis a of its runs, kept with
// it: a finished job's verdict and analysis are those of its end, not
// recomputed when they are read. The verdict is a's for a succeeded job
// and none otherwise (a failed or canceled job was not judged); why is
// kept for a failed job. a is nil when the runs could not be read (a job
// given up on must end all the same); the job then has no verdict. The
// progress no longer shows a current run.
func (j *Job) Finish(to Status, why string, a *Analysis, now time.Time) error {
	if !to.Terminal() {
		return fmt.Errorf("%w: %s is not an end", ErrBadTransition, to)
	}
	if err := j.Transition(to, now); err != nil {
		return err
	}
	j.Error, j.Verdict = "", ""
	switch to {
	case StatusFailed:
		j.Error = why
	case StatusSucceeded:
		if a != nil {
			j.Verdict = a.Verdict.Result
		}
	}
	j.Analysis = a
	j.Progress.CurrentRun, j.Progress.RequestsDone, j.Progress.CurrentRPS = nil, 0, 0
	return nil
}

// Done sets the progress of a job that ended to what its stored runs
// did: their complete requests in all (RunsDone already counts them). A reader of a
// finished job would otherwise see the last run's counter reset to 0, as
// if nothing had been measured.
func (p *Progress) Done(runs []Run) {
	p.CurrentRun, p.CurrentRPS = nil, 0
	p.RequestsDone = 0
	for _, r := range runs {
		if r.Result != nil {
			p.RequestsDone += r.Result.CompleteRequests
		}
	}
}
