package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobend"
	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
)

// ErrHandedBack is returned by HandleJobRun when it gave the job back to
// the queue (shutdown, or asynq ending the attempt): the job is queued
// again and a later attempt resumes after the runs already stored.
var ErrHandedBack = errors.New("worker: job handed back")

// Reasons a sweep stops early, sorted by end.
var (
	errCanceled    = errors.New("worker: cancel requested")
	errInterrupted = errors.New("worker: interrupted")
	errNeverRuns   = errors.New("worker: job can never run")
	errFinished    = errors.New("worker: job already finished")
	// errNotifyLost: the job ended but its webhook could not be queued;
	// the task is retried soon, and the retry notifies again.
	errNotifyLost = jobend.ErrNotifyLost
)

// jobStore is the persistence the runner needs; *store.Store implements it.
type jobStore interface {
	UpdateJob(ctx context.Context, id string, fn func(j *job.Job) error) (*job.Job, error)
	RunKeys(ctx context.Context, id string) (map[job.RunKey]bool, error)
	Runs(ctx context.Context, id string) ([]job.Run, error)
	GetJob(ctx context.Context, id string) (*job.Job, error) // baseline.go: the compare_to job
	// ListJobs finds the earlier jobs a trend is judged against (jobend).
	ListJobs(ctx context.Context, f store.ListFilter) ([]*job.Job, string, error)
	SaveRun(ctx context.Context, jobID string, r *job.Run) (bool, error)
	UnleasedRunning(ctx context.Context, limit int) ([]string, error) // janitor.go
	leaseStore
	shardStore  // shard.go
	targetStore // exclusive.go
	progressSink
	cancelFlag
}

// Runner handles job:run tasks: one call runs one job's sweep.
type Runner struct {
	st            jobStore
	policy        *netguard.Policy
	resolver      netguard.Resolver
	scraper       *monitor.Scraper // monitor.go: the targets' metrics endpoints
	log           *slog.Logger
	cancelPoll    time.Duration
	progressEvery time.Duration
	notifier      Notifier
	ender         *jobend.Ender // end.go: every end of a job
	targets       TargetChecker
	lease         time.Duration
	crashRetries  int             // also bounds a sharded run's redos
	crashes       job.CrashBudget // how often a job whose worker died is resumed
	shardWait     time.Duration
	shards        shardQueue // coordinate.go; nil: no sharded runs
	// recordShard, set by tests, gets each shard's measurement with its
	// raw samples, which the stored result does not keep.
	recordShard func(shard int, m *measure.Measurement)
	id          string        // this process, in the holders of its leases
	testbed     job.Testbed   // what this process measures on (testbed.go), stored with each run
	seq         atomic.Uint64 // numbers this process's attempts

	drainOnce sync.Once
	draining  chan struct{} // closed on shutdown: no run starts after it
	active    sync.WaitGroup
}

// NewRunner returns a Runner on st. Worker builds one; tests and tools
// may call its HandleJobRun directly.
func NewRunner(st *store.Store, cfg Config) *Runner {
	return newRunner(st, cfg.withDefaults())
}

func newRunner(st jobStore, cfg Config) *Runner {
	return &Runner{
		st: st, policy: cfg.Policy, resolver: cfg.Resolver, log: cfg.Logger,
		cancelPoll: cancelPollInterval, progressEvery: progressInterval, notifier: cfg.Notifier,
		targets: cfg.Targets, lease: cfg.JobLease, crashRetries: cfg.CrashRetries, shardWait: cfg.ShardWait, id: workerID(),
		crashes:  job.CrashBudget{Stalled: cfg.CrashRetries, Total: cfg.CrashLimit},
		draining: make(chan struct{}),
		ender:    jobend.New(st, cfg.Notifier, cfg.Logger),
		scraper:  newScraper(cfg.Policy, cfg.Resolver),
		testbed:  probeTestbed(cfg.Pool), // once per process: one Runner per worker
	}
}

// HandleJobRun runs the sweep of the job named by t. It returns nil when
// the job ended (succeeded, failed, canceled, or was already over) or
// another task's attempt holds it, an error wrapping asynq.SkipRetry when
// the job can never run, ErrHandedBack when it gave the job back, and any
// other error for asynq to retry. On the task's last attempt an error
// asynq would retry fails the job instead (giveUp, outcome.go), since
// asynq archives the task.
func (r *Runner) HandleJobRun(ctx context.Context, t *asynq.Task) error {
	r.active.Add(1)
	defer r.active.Done()
	p, err := queue.ParseJobRun(t)
	if err != nil {
		return fmt.Errorf("worker: %w: %w", err, asynq.SkipRetry)
	}
	err = r.attempt(ctx, p.JobID)
	if err != nil && !errors.Is(err, asynq.SkipRetry) && lastAttempt(ctx) {
		return r.giveUp(ctx, p.JobID, err)
	}
	return err
}

// attempt is one try at the job: take its lease, begin, then sweep what
// is left; the lease is given up once the attempt recorded its end.
func (r *Runner) attempt(ctx context.Context, id string) error {
	h, err := r.take(ctx, id, taskOf(ctx, id)) // lease.go
	if err != nil || h == nil {
		return err
	}
	defer h.release(ctx)
	if err := r.claimTargets(ctx, h); err != nil { // exclusive.go
		return err
	}
	j, err := r.begin(ctx, h)
	if err != nil || j == nil {
		r.dropTargets(ctx, h)
		return err
	}
	sw, err := r.newSweep(h.ctx, j, h)
	if err != nil {
		return r.handBack(ctx, h, job.Progress{RunsTotal: j.Progress.RunsTotal, RunsDone: j.Progress.RunsDone}, err)
	}
	return sw.run(h.ctx)
}

// begin starts the job for the attempt holding its lease: a queued job
// moves to running, and one left running by an attempt that died is taken
// over (job.Start); either way the attempt gets its number. It returns
// nil, nil when there is nothing to do: the job finished or was canceled
// while queued, or its workers died too often and it was failed here.
func (r *Runner) begin(ctx context.Context, h *hold) (*job.Job, error) {
	id := h.id
	var from job.Status
	var startedAt *time.Time
	var over *job.Job // the job as found, when it was already over
	var crashLoop string
	j, err := r.st.UpdateJob(ctx, id, func(j *job.Job) error {
		from, startedAt, crashLoop = j.Status, j.StartedAt, ""
		if j.Status.Terminal() {
			c := *j
			over = &c
			return fmt.Errorf("%w: %s", errFinished, j.Status)
		}
		if j.Status == job.StatusRunning {
			crashLoop = j.CrashLoop(r.crashes)
		}
		n, err := j.Start(h.holder, h.task, r.crashes, time.Now().UTC())
		h.attempt = n
		return err
	})
	started := from == job.StatusQueued
	handedBack := started && startedAt != nil
	switch {
	case errors.Is(err, errFinished):
		r.log.Info("worker: job not run", "job", id, "reason", err)
		if over != nil {
			// Every job passes here or through finish: canceled while
			// queued (by the API, maybe after a hand-back), or finished by
			// an attempt that died before it notified or before asynq
			// heard of it. The notifier sends each event once, so telling
			// it again is safe and recovers a notify lost to a crash.
			if err := r.notify(ctx, over, job.EventFor(over.Status)); err != nil {
				return nil, fmt.Errorf("worker: job %s: %w: %w", id, errNotifyLost, err)
			}
		}
		return nil, nil
	case errors.Is(err, job.ErrCrashLoop):
		// Through abandon like every job no attempt will run again; this
		// attempt holds the lease, so no other starts it meanwhile.
		why := "gave up: " + crashLoop + "; a job that keeps killing its workers is not run again"
		if _, err := r.abandon(ctx, id, why); err != nil && !errors.Is(err, errFinished) && !errors.Is(err, errNotifyLost) {
			return nil, fmt.Errorf("worker: job %s: fail after crashes: %w", id, err)
		}
		return nil, fmt.Errorf("worker: job %s: %s: %w", id, why, asynq.SkipRetry)
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("worker: job %s: %w: %w", id, err, asynq.SkipRetry)
	case err != nil:
		r.refused(h, from, job.StatusRunning, err)
		return nil, fmt.Errorf("worker: start job %s: %w", id, err)
	}
	if started {
		if err := r.st.AppendEvent(ctx, id, job.EventStarted, map[string]any{"status": j.Status}); err != nil {
			// Started but unannounced: hand it back, so the retry starts it again.
			r.log.Warn("worker: append job.started event", "job", id, "err", err)
			return nil, r.handBack(ctx, h, job.Progress{RunsTotal: j.Progress.RunsTotal, RunsDone: j.Progress.RunsDone}, err)
		}
	}
	if !handedBack {
		// A first start, or a job left running by an attempt that died,
		// maybe before it notified (the notifier sends an event once
		// however often it is told). The attempt that handed a job back
		// got past this point, so a resumed one is not started again.
		// A start notice is not worth holding up the benchmark: logged only.
		_ = r.notify(ctx, j, job.EventStarted)
	}
	r.log.Info("worker: job running", "job", id, "resumed", !started, "attempt", h.attempt, "crashes", j.Crashes, "holder", h.holder)
	return j, nil
}

// drain makes every sweep hand its job back after its current run.
func (r *Runner) drain() { r.drainOnce.Do(func() { close(r.draining) }) }

// wait waits up to limit for running handlers to return.
func (r *Runner) wait(limit time.Duration) bool {
	done := make(chan struct{})
	go func() {
		r.active.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(limit):
		return false
	}
}

// sweep is one attempt at one job.
type sweep struct {
	r        *Runner
	ctx      context.Context // the attempt's; ends on asynq abort or timeout
	job      *job.Job
	hold     *hold        // the attempt's lease and number (lease.go)
	planner  *job.Planner // the job's spec, its targets parsed
	points   []job.Point
	todo     []job.RunKey // the schedule without the runs already stored
	stored   int
	progress *progressWriter
	watch    *cancelWatch
	pins     netguard.Pins // the verified IPs of the target hosts (verify.go)
}

func (r *Runner) newSweep(ctx context.Context, j *job.Job, h *hold) (*sweep, error) {
	have, err := r.st.RunKeys(ctx, j.ID)
	if err != nil {
		return nil, fmt.Errorf("worker: job %s: %w", j.ID, err)
	}
	// One Planner for the attempt: each target is parsed once, not for
	// every run and warm-up.
	pl := j.Spec.Planner()
	sw := &sweep{r: r, ctx: ctx, job: j, hold: h, planner: pl, points: pl.Points()}
	schedule := pl.Schedule()
	for _, k := range schedule {
		if have[k] {
			sw.stored++
			continue
		}
		sw.todo = append(sw.todo, k)
	}
	start := job.Progress{RunsTotal: len(schedule), RunsDone: sw.stored}
	sw.progress = newProgressWriter(r.st, j.ID, start, r.progressEvery, r.log)
	return sw, nil
}

func (sw *sweep) run(ctx context.Context) error {
	sw.watch = watchCancel(ctx, sw.r.st, sw.job.ID, sw.r.cancelPoll, sw.r.log)
	sw.progress.start(ctx)
	err := sw.runAll()
	sw.progress.stop()
	sw.watch.stop()
	return sw.end(err)
}

func (sw *sweep) runAll() error {
	if sw.job.CancelRequested { // a retry of a job canceled while it ran
		return errCanceled
	}
	if err := sw.checkTargets(); err != nil { // verify.go: before any load
		return err
	}
	for i, k := range sw.todo {
		if i > 0 {
			if err := sw.pause(); err != nil {
				return err
			}
		}
		if err := sw.interrupted(); err != nil {
			return err
		}
		if err := sw.runOne(k); err != nil {
			return err
		}
	}
	return sw.search() // search.go: the capacity search, after the sweep
}

// interrupted says whether the sweep must stop before its next run.
func (sw *sweep) interrupted() error {
	select {
	case <-sw.watch.ctx.Done():
		return sw.stopReason()
	case <-sw.r.draining:
		return errInterrupted
	default:
		return nil
	}
}

// stopReason tells a cancel from a lost lease and the end of the attempt.
func (sw *sweep) stopReason() error {
	switch {
	case sw.watch.canceled():
		return errCanceled
	case sw.hold.lostLease():
		return errLeaseLost
	default:
		return errInterrupted
	}
}

// pause waits sweep.pause_between_runs, or less if the sweep must stop.
func (sw *sweep) pause() error { return sw.wait(sw.job.Spec.Sweep.PauseBetweenRuns.Std()) }

// wait waits d, or less if the sweep must stop.
func (sw *sweep) wait(d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-sw.watch.ctx.Done():
		return sw.stopReason()
	case <-sw.r.draining:
		return errInterrupted
	}
}

// runOne runs one repeat of one point, after its warm-up, and stores it.
// A run cut short by the job's cancel is stored as partial, with what it
// measured, as ab reports what it measured when stopped; one cut short by
// the end of the attempt is discarded, since the next attempt runs it
// again. A run that a threshold marked to abort ended is stored as
// aborted; when the threshold aborts the job, the sweep ends there.
func (sw *sweep) runOne(k job.RunKey) error {
	if k.Point < 0 || k.Point >= len(sw.points) {
		return fmt.Errorf("%w: run %v: no point %d", errNeverRuns, k, k.Point)
	}
	p := sw.points[k.Point]
	plan, err := sw.planner.Plan(p)
	if err != nil {
		return fmt.Errorf("%w: point %d: %w", errNeverRuns, k.Point, err)
	}
	sw.progress.update(func(pr *job.Progress) {
		pr.CurrentRun, pr.RequestsDone, pr.CurrentRPS = &job.RunKey{Point: k.Point, Repeat: k.Repeat}, 0, 0
	})
	if n := sw.job.Spec.ShardCount(); n > 1 {
		return sw.runSharded(k, p, plan, n) // coordinate.go
	}
	if err := sw.warmup(p); err != nil {
		return err
	}
	_, err = sw.measure(k, p, plan)
	return err
}

// measure runs plan as run k of point p and stores it: runOne's run, and
// a capacity search's probe (search.go), which reads the stored run back.
func (sw *sweep) measure(k job.RunKey, p job.Point, plan measure.Plan) (*job.Run, error) {
	settled := sw.settle(p) // monitor.go: before the run's clock starts
	plan.Guard, plan.Progress = sw.guard(), sw.progress.snapshot
	plan.OnInterval = sw.progress.intervals.begin(k, p, plan, 1)
	aborts := sw.watchAborts(k, p, &plan) // abort.go
	started := time.Now().UTC()
	mon := sw.startMonitor(p, plan, settled) // monitor.go
	m, err := sw.load(plan)
	partial := errors.Is(err, errCanceled) && m != nil && m.Complete+m.Failed > 0
	if err != nil && !partial {
		sw.serverOf(mon, nil)
		return nil, fmt.Errorf("point %d: %w", k.Point, err)
	}
	server := sw.serverOf(mon, m)
	run, rerr := job.NewRun(k, p.Target, p.Concurrency, started, time.Now().UTC(), m, abreport.Options{
		VariableLength: plan.AcceptVariableLength,
		BodySent:       len(plan.Body) > 0,
	})
	if rerr != nil {
		return nil, fmt.Errorf("point %d: %w", k.Point, rerr)
	}
	run.Partial, run.Server = partial, server
	tb := sw.r.testbed
	run.Testbed = &tb
	ended := markAborted(run, aborts, m)
	if serr := sw.save(run); serr != nil {
		return run, serr
	}
	if partial {
		return run, err
	}
	return run, ended
}

// warmup sends sweep.warmup_requests before a run; nothing is kept.
func (sw *sweep) warmup(p job.Point) error {
	plan, ok, err := sw.planner.WarmupPlan(p)
	if err != nil {
		return fmt.Errorf("%w: warm-up of point %d: %w", errNeverRuns, p.Index, err)
	}
	if !ok {
		return nil
	}
	plan.Guard = sw.guard()
	if _, err := sw.load(plan); err != nil {
		return fmt.Errorf("warm-up of point %d: %w", p.Index, err)
	}
	return nil
}

// load runs a plan under the cancel watch. A canceled measurement comes
// back with the stop reason as the error, for runOne to keep after a
// cancel; every other caller takes the error alone.
func (sw *sweep) load(plan measure.Plan) (*measure.Measurement, error) {
	m, err := loadgen.Run(sw.watch.ctx, plan)
	switch {
	case errors.Is(err, measure.ErrInvalidPlan), errors.Is(err, measure.ErrUnreachable):
		// A refused or unresolvable target: no request was sent, and
		// trying again would only ask the same question.
		return nil, fmt.Errorf("%w: %w", errNeverRuns, err)
	case err != nil:
		return nil, err
	case m.Canceled:
		return m, sw.stopReason()
	}
	return m, nil
}

// save stores a finished run even if the attempt is ending: it is
// complete, and storing it spares the next attempt running it again.
func (sw *sweep) save(run *job.Run) error {
	ctx, cancel := detached(sw.ctx)
	defer cancel()
	saved, err := sw.r.st.SaveRun(ctx, sw.job.ID, run)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %w", errNeverRuns, err)
	}
	if err != nil {
		return err
	}
	if saved { // else an overlapping attempt stored it first
		sw.stored++
	}
	sw.progress.endRun(ctx)
	ev := runFinished{RunKey: run.RunKey, Target: run.Target, Concurrency: run.Concurrency,
		CompleteRequests: run.Result.CompleteRequests, FailedRequests: run.Result.FailedRequests,
		RequestsPerSecond: run.Result.RequestsPerSecond}
	if err := sw.r.st.AppendEvent(ctx, sw.job.ID, job.EventRunFinished, ev); err != nil {
		sw.r.log.Warn("worker: append run.finished event", "job", sw.job.ID, "run", run.RunKey, "err", err)
	}
	stored := sw.stored
	sw.progress.update(func(pr *job.Progress) {
		pr.RunsDone, pr.CurrentRun, pr.RequestsDone, pr.CurrentRPS = stored, nil, 0, 0
	})
	return nil
}

// runFinished is the data of a run.finished event.
type runFinished struct {
	job.RunKey
	Target            string  `json:"target"`
	Concurrency       int     `json:"concurrency"`
	CompleteRequests  int64   `json:"complete_requests"`
	FailedRequests    int64   `json:"failed_requests"`
	RequestsPerSecond float64 `json:"requests_per_second"`
}

// detached gives the writes that record how an attempt ended a context
// that survives the attempt's own, bounded so a dead Redis cannot hold the
// handler forever.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
}
