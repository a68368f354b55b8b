package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
)

// Timings of sharded runs.
const (
	// DefaultShardWait is how long a sharded run waits for all its shards
	// to join before its job fails for want of free workers.
	DefaultShardWait = time.Minute
	// shardStartMargin is how far past Redis's TIME the agreed start is
	// set once every shard joined: every shard must see it, measure its
	// clock and prepare its load before it comes. Shards poll every
	// shardBarrierPoll, so it leaves them most of it.
	shardStartMargin = 250 * time.Millisecond
	// shardBarrierPoll is how often a shard and the coordinator look at the
	// round until the start, and shardRunPoll how often during the load
	// (an abort, a peer's lease running out): rarely enough that the
	// watching takes nothing measurable from the load.
	shardBarrierPoll = 10 * time.Millisecond
	shardRunPoll     = 100 * time.Millisecond
)

// shardStore is the store's side of shard rounds; *store.Store implements it.
type shardStore interface {
	JoinShard(ctx context.Context, id, round string, shard int, worker string, ttl, roundTTL time.Duration) (int, error)
	RenewShardLease(ctx context.Context, id, round string, shard int, holder string, ttl time.Duration) (bool, error)
	ReleaseShardLease(ctx context.Context, id, round string, shard int, holder string) error
	StartShards(ctx context.Context, id, round string, margin, roundTTL time.Duration) (time.Time, error)
	AbortShards(ctx context.Context, id, round, why string, roundTTL time.Duration) (bool, error)
	PutShardResult(ctx context.Context, id, round string, shard int, data []byte, roundTTL time.Duration) error
	ShardRoundState(ctx context.Context, id, round string, k int) (store.ShardRound, error)
	ShardResults(ctx context.Context, id, round string) (map[int][]byte, error)
	DropShardRound(ctx context.Context, id, round string) error
	redisClock
}

// abortKind says what giving a round up means for its run.
type abortKind string

const (
	// abortLost: a shard's worker died, stopped or hung; the run is
	// redone as a whole in a new round.
	abortLost abortKind = "lost"
	// abortFailed: a shard's load can never run (a refused target); the
	// job fails with the reason.
	abortFailed abortKind = "failed"
	// abortTooFew: not every shard joined within the shard wait; the job
	// fails saying how many it needed and found.
	abortTooFew abortKind = "too_few"
	// abortStopped: the coordinator stopped (cancel, shutdown, lost job
	// lease); the job's own end decides what happens.
	abortStopped abortKind = "stopped"
)

// abortReason is the round's "abort" field.
type abortReason struct {
	Kind abortKind `json:"kind"`
	Msg  string    `json:"msg"`
}

func (a abortReason) encode() string {
	b, _ := json.Marshal(a) // two strings: cannot fail
	return string(b)
}

func parseAbort(s string) abortReason {
	var a abortReason
	if json.Unmarshal([]byte(s), &a) != nil || a.Kind == "" {
		return abortReason{Kind: abortLost, Msg: s}
	}
	return a
}

// Errors of a sharded run.
var (
	// errShardLost: a shard was lost (abortLost); the coordinator redoes
	// the run.
	errShardLost = errors.New("worker: a shard of the run was lost")
	// errShards fails the job: the run could not get its shards, or kept
	// losing them.
	errShards = errors.New("worker: sharded run failed")
	// errRoundOver: the round was given up by another of its shards.
	errRoundOver = store.ErrRoundOver
)

// shardResult is what a shard stores in its round.
type shardResult struct {
	Worker string `json:"worker"`
	// Run is the shard's part as a stored run (job.NewRun, with its
	// measurement, so job.MergeShards merges the parts exactly), its
	// times on Redis's clock.
	Run *job.Run `json:"run"`
}

// shardTask is one shard's part of a round, wherever it runs.
type shardTask struct {
	jobID, round string
	index, count int
	key          job.RunKey
	target       string           // the point's target name
	opts         abreport.Options // how the run's result is built
	plan         measure.Plan     // the shard's part (job.ShardPlan), guarded
	warmup       *measure.Plan    // its part of the warm-up, nil for none
	roundTTL     time.Duration
	joinBy       time.Time     // no agreed start by then: the round is over
	runBound     time.Duration // how long the load may take once started
}

// runShard runs one shard: its warm-up, then it joins the round with a
// lease, measures its clock against Redis, waits for the agreed start,
// runs its part of the load from that instant on its own clock (the
// engine prepares first, then waits for it: Plan.StartAt) and stores its
// part of the run. It stops when the round is given up, when a
// joined peer's lease runs out before it stored its result, or when ctx
// ends; a failure of its own gives the round up with the reason. It
// returns nil once its result is stored, errRoundOver when the round
// ended without it, or its own failure.
func (r *Runner) runShard(ctx context.Context, t shardTask) error {
	if t.warmup != nil {
		if _, err := loadgen.Run(ctx, *t.warmup); err != nil {
			return r.giveRoundUp(t, shardFailure(err), fmt.Errorf("worker: warm-up of shard %d: %w", t.index, err))
		}
	}
	if ctx.Err() != nil {
		return errRoundOver
	}
	if _, err := r.st.JoinShard(ctx, t.jobID, t.round, t.index, r.id, r.lease, t.roundTTL); err != nil {
		return err
	}
	l := r.keepShardLease(ctx, t)
	defer l.release()
	clk, err := measureClock(l.ctx, r.st)
	if err != nil {
		return r.giveRoundUp(t, abortLost, err)
	}
	start, err := r.awaitStart(l.ctx, t)
	if err != nil {
		return err
	}
	w := r.watchRound(l.ctx, t)
	defer w.stop()
	at := clk.LocalAt(start)
	early := time.Until(at)
	t.plan.StartAt = at // the engine prepares, then waits for it
	if r.recordShard != nil {
		t.plan.RecordSamples = true
	}
	m, err := loadgen.Run(w.ctx, t.plan)
	if err == nil && !m.Canceled && r.recordShard != nil {
		r.recordShard(t.index, m)
	}
	if err == nil {
		r.log.Info("worker: shard measured", "job", t.jobID, "round", t.round, "shard", t.index,
			"late", m.Started.Sub(at.Round(0)), "waited", early, "clock_offset", clk.Offset(), "rtt", clk.RTT)
	}
	switch {
	case err != nil:
		return r.giveRoundUp(t, shardFailure(err), fmt.Errorf("worker: shard %d: %w", t.index, err))
	case m.Canceled:
		return w.reason(l)
	}
	m.Started = clk.ServerAt(m.Started) // so the shards' parts line up on one clock
	run, err := job.NewRun(t.key, t.target, m.Concurrency, m.Started.UTC(), m.Started.Add(m.Elapsed).UTC(), m, t.opts)
	if err != nil {
		return r.giveRoundUp(t, abortLost, err)
	}
	tb := r.testbed
	run.Testbed = &tb // the coordinator's merge keeps it when every shard's agrees
	res, err := json.Marshal(shardResult{Worker: r.id, Run: run})
	if err != nil {
		return r.giveRoundUp(t, abortLost, err)
	}
	wctx, cancel := detached(ctx)
	defer cancel()
	return r.st.PutShardResult(wctx, t.jobID, t.round, t.index, res, t.roundTTL)
}

// shardFailure tells a load that can never run from one that broke.
func shardFailure(err error) abortKind {
	if errors.Is(err, measure.ErrInvalidPlan) || errors.Is(err, measure.ErrUnreachable) {
		return abortFailed
	}
	return abortLost
}

// giveRoundUp aborts t's round with err as the reason and returns err.
func (r *Runner) giveRoundUp(t shardTask, kind abortKind, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if _, aerr := r.st.AbortShards(ctx, t.jobID, t.round, abortReason{Kind: kind, Msg: err.Error()}.encode(), t.roundTTL); aerr != nil {
		r.log.Warn("worker: abort shard round", "job", t.jobID, "round", t.round, "err", aerr)
	}
	return err
}

// awaitStart polls the round until the coordinator set the start and
// returns it on Redis's clock. It gives up (errRoundOver) when the round
// is aborted, a joined peer is lost, or the barrier's deadline passes.
func (r *Runner) awaitStart(ctx context.Context, t shardTask) (time.Time, error) {
	tick := time.NewTicker(shardBarrierPoll)
	defer tick.Stop()
	for {
		st, err := r.st.ShardRoundState(ctx, t.jobID, t.round, t.count)
		switch {
		case err != nil && ctx.Err() != nil:
			return time.Time{}, errRoundOver
		case err != nil:
			r.log.Warn("worker: read shard round", "job", t.jobID, "round", t.round, "err", err)
		case st.Abort != "":
			return time.Time{}, errRoundOver
		case !st.Start.IsZero():
			return st.Start, nil
		case lostShard(st, t.count) >= 0:
			return time.Time{}, errRoundOver
		}
		if time.Now().After(t.joinBy) {
			return time.Time{}, errRoundOver
		}
		select {
		case <-ctx.Done():
			return time.Time{}, errRoundOver
		case <-tick.C:
		}
	}
}

// lostShard is a shard that joined but whose lease ran out before it
// stored its result (its worker died, or lost Redis for a lease), or -1.
func lostShard(st store.ShardRound, k int) int {
	for i := range k {
		if _, joined := st.Joined[i]; joined && !st.Leased[i] && !st.Results[i] {
			return i
		}
	}
	return -1
}

// roundWatch polls a started round while the shard's load runs and
// cancels its context when the round is given up or a peer is lost.
type roundWatch struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	lost   atomic.Int64 // 1 + the lost peer, 0 for none
}

func (r *Runner) watchRound(parent context.Context, t shardTask) *roundWatch {
	ctx, cancel := context.WithCancel(parent)
	w := &roundWatch{ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(shardRunPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			st, err := r.st.ShardRoundState(ctx, t.jobID, t.round, t.count)
			if err != nil {
				continue // a hiccup must not stop a benchmark; the leases bound a real outage
			}
			if i := lostShard(st, t.count); st.Abort != "" || i >= 0 {
				w.lost.Store(int64(i + 1))
				cancel()
				return
			}
		}
	}()
	return w
}

func (w *roundWatch) stop() {
	w.cancel()
	<-w.done
}

// reason is why a shard's load stopped early: the round ended, or the
// shard lost its own lease, or its context ended (both give the round up).
func (w *roundWatch) reason(l *shardLease) error {
	switch {
	case w.lost.Load() != 0:
		return errRoundOver
	case l.lost.Load():
		return l.r.giveRoundUp(l.t, abortLost, fmt.Errorf("worker: shard %d lost its lease", l.t.index))
	default:
		return l.r.giveRoundUp(l.t, abortLost, fmt.Errorf("worker: shard %d stopped: its worker is shutting down", l.t.index))
	}
}

// shardLease renews a shard's lease while it takes part in a round, so
// the others see within a lease that its worker died.
type shardLease struct {
	r    *Runner
	t    shardTask
	ctx  context.Context // ends when the lease is lost or released
	stop context.CancelFunc
	done chan struct{}
	lost atomic.Bool
}

func (r *Runner) keepShardLease(ctx context.Context, t shardTask) *shardLease {
	l := &shardLease{r: r, t: t, done: make(chan struct{})}
	l.ctx, l.stop = context.WithCancel(ctx)
	go func() {
		defer close(l.done)
		every := r.lease / leaseRenewals
		tick := time.NewTicker(every)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-l.ctx.Done():
				return
			case <-tick.C:
			}
			rctx, cancel := context.WithTimeout(l.ctx, every)
			ok, err := r.st.RenewShardLease(rctx, t.jobID, t.round, t.index, r.id, r.lease)
			cancel()
			if err == nil && ok {
				last = time.Now()
				continue
			}
			if err != nil && time.Since(last) < r.lease {
				continue
			}
			r.log.Error("worker: shard lease lost", "job", t.jobID, "round", t.round, "shard", t.index, "err", err)
			l.lost.Store(true)
			l.stop()
			return
		}
	}()
	return l
}

func (l *shardLease) release() {
	l.stop()
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := l.r.st.ReleaseShardLease(ctx, l.t.jobID, l.t.round, l.t.index, l.r.id); err != nil {
		l.r.log.Warn("worker: release shard lease", "job", l.t.jobID, "shard", l.t.index, "err", err)
	}
}

// HandleShard runs one shard of a sharded run (a job:shard task) for the
// worker process that coordinates the run. It is never retried: a shard
// that cannot take part gives the round up, and the coordinator decides
// (a lost shard redoes the run in a new round, with new tasks). It
// returns nil however the shard ended, and a SkipRetry error for a
// payload it cannot read.
func (r *Runner) HandleShard(ctx context.Context, task *asynq.Task) error {
	r.active.Add(1)
	defer r.active.Done()
	p, err := queue.ParseShard(task)
	if err != nil {
		return fmt.Errorf("worker: %w: %w", err, asynq.SkipRetry)
	}
	t, err := r.prepareShard(ctx, p)
	if err != nil {
		r.log.Info("worker: shard not run", "job", p.JobID, "round", p.Round, "shard", p.Shard, "reason", err)
		return nil
	}
	r.log.Info("worker: shard joining", "job", p.JobID, "round", p.Round, "shard", p.Shard, "of", p.Shards)
	switch err := r.runShard(ctx, t); {
	case err == nil:
		r.log.Info("worker: shard done", "job", p.JobID, "round", p.Round, "shard", p.Shard)
	case errors.Is(err, errRoundOver):
		r.log.Info("worker: shard round ended without this shard's result", "job", p.JobID, "round", p.Round, "shard", p.Shard)
	default:
		r.log.Warn("worker: shard failed", "job", p.JobID, "round", p.Round, "shard", p.Shard, "err", err)
	}
	return nil
}

// prepareShard builds a shard's task from its job's stored spec: the
// point's plan split as the coordinator split it, under the same address
// policy, the target hosts verified again as before any load.
func (r *Runner) prepareShard(ctx context.Context, p queue.ShardPayload) (shardTask, error) {
	j, err := r.st.GetJob(ctx, p.JobID)
	if err != nil {
		return shardTask{}, err
	}
	if j.Status != job.StatusRunning {
		return shardTask{}, fmt.Errorf("job is %s", j.Status)
	}
	pl := j.Spec.Planner()
	points := pl.Points()
	if p.Point >= len(points) {
		return shardTask{}, fmt.Errorf("no point %d", p.Point)
	}
	pt := points[p.Point]
	bound := pl.RunEstimate(pt)
	t := shardTask{
		jobID: p.JobID, round: p.Round, index: p.Shard, count: p.Shards,
		key: job.RunKey{Point: p.Point, Repeat: p.Repeat}, target: pt.Target,
		roundTTL: r.shardWait + 2*bound + time.Minute, joinBy: time.Now().Add(r.shardWait), runBound: bound,
	}
	select {
	case <-r.draining:
		return t, r.giveRoundUp(t, abortLost, fmt.Errorf("shard %d's worker is shutting down", p.Shard))
	default:
	}
	var pins netguard.Pins
	if r.targets != nil {
		pins, err = r.targets.VerifySpec(ctx, j.Owner, pl.TargetURLs())
		if err != nil {
			kind := abortLost
			if errors.Is(err, targetverify.ErrUnverified) || errors.Is(err, job.ErrInvalid) {
				kind = abortFailed
			}
			return t, r.giveRoundUp(t, kind, fmt.Errorf("shard %d: verify targets: %w", p.Shard, err))
		}
	}
	guard := &netguard.LoadGuard{Policy: r.policy, Resolver: r.resolver, Pins: pins}
	plan, err := pl.Plan(pt)
	if err != nil {
		return t, r.giveRoundUp(t, abortFailed, fmt.Errorf("shard %d: point %d: %w", p.Shard, p.Point, err))
	}
	t.plan = job.ShardPlan(plan, p.Shard, p.Shards)
	t.plan.Guard = guard
	t.opts = resultOptions(plan)
	if wp, ok, err := pl.WarmupPlan(pt); err == nil && ok {
		wp = job.ShardPlan(wp, p.Shard, p.Shards)
		wp.Guard = guard
		t.warmup = &wp
	}
	return t, nil
}
