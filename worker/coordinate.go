package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/queue"
)

// shardQueue puts shard tasks on the queue and takes back the ones no
// worker picked up; *asynq.Client and *asynq.Inspector implement it
// together (shardTasks).
type shardQueue interface {
	queue.Enqueuer
	DeleteTask(queue, id string) error
}

// shardTasks is a shardQueue from asynq's client and inspector.
type shardTasks struct {
	*asynq.Client
	ins *asynq.Inspector
}

func (s shardTasks) DeleteTask(q, id string) error { return s.ins.DeleteTask(q, id) }

// runSharded runs one run on n worker processes (sweep.shards) and stores
// the merged result once. A round whose shard was lost is redone in a new
// round, up to Config.CrashRetries times; the job fails after that, or at
// once when the run cannot get n free workers within the shard wait.
func (sw *sweep) runSharded(k job.RunKey, p job.Point, plan measure.Plan, n int) error {
	for try := 0; ; try++ {
		run, err := sw.shardRound(k, p, plan, n)
		switch {
		case err == nil:
			return sw.save(run)
		case errors.Is(err, errShardLost) && try < sw.r.crashRetries:
			sw.r.log.Warn("worker: a shard of the run was lost; running the run again on every shard", "job", sw.job.ID, "run", k, "try", try+1, "err", err)
		case errors.Is(err, errShardLost):
			return fmt.Errorf("%w: run %d/%d lost a shard %d times, the last time: %w", errShards, k.Point, k.Repeat, try+1, err)
		default:
			return err
		}
	}
}

// shardRound is one try at a sharded run: it enqueues shards 1..n-1, runs
// shard 0 itself, starts them all together once all joined, and merges
// their measurements when all stored one.
func (sw *sweep) shardRound(k job.RunKey, p job.Point, plan measure.Plan, n int) (*job.Run, error) {
	r := sw.r
	if r.shards == nil {
		return nil, fmt.Errorf("%w: a sharded run needs a worker serving the shard queue", errNeverRuns)
	}
	settled := sw.settle(p) // monitor.go: before the shards' join deadline starts
	bound := sw.planner.RunEstimate(p)
	t := shardTask{
		jobID: sw.job.ID, round: fmt.Sprintf("%d-%d-%08x", k.Point, k.Repeat, rand.Uint32()),
		index: 0, count: n, key: k, target: p.Target, opts: resultOptions(plan), plan: job.ShardPlan(plan, 0, n),
		roundTTL: r.shardWait + 2*bound + time.Minute, joinBy: time.Now().Add(r.shardWait), runBound: bound,
	}
	if wp, ok, err := sw.planner.WarmupPlan(p); err != nil {
		return nil, fmt.Errorf("%w: warm-up of point %d: %w", errNeverRuns, p.Index, err)
	} else if ok {
		wp = job.ShardPlan(wp, 0, n)
		wp.Guard = sw.guard()
		t.warmup = &wp
	}
	t.plan.Guard, t.plan.Progress = sw.guard(), sw.progress.snapshot
	t.plan.OnInterval = sw.progress.intervals.begin(k, p, plan, n)
	ctx := sw.watch.ctx
	var tasks []string
	for i := 1; i < n; i++ {
		pl := queue.ShardPayload{JobID: t.jobID, Point: k.Point, Repeat: k.Repeat, Round: t.round, Shard: i, Shards: n}
		task, err := queue.NewShardTask(pl, t.roundTTL)
		if err == nil {
			_, err = queue.Enqueue(ctx, r.shards, task)
		}
		if err != nil {
			sw.dropRound(t, tasks, abortStopped, err)
			return nil, fmt.Errorf("worker: enqueue shard %d of run %v: %w", i, k, err)
		}
		tasks = append(tasks, pl.TaskID())
	}
	mon := sw.startMonitor(p, t.plan, settled) // monitor.go: once for all shards
	own := make(chan error, 1)
	go func() { own <- r.runShard(ctx, t) }()
	run, err := sw.coordinate(ctx, t, own)
	if err != nil {
		sw.serverOf(mon, nil)
		sw.dropRound(t, tasks, abortStopped, err)
		return nil, err
	}
	if mon != nil {
		m, derr := run.DecodeMeasurement() // the merge: the span and timeline of all shards
		if derr != nil {
			m = nil // no server numbers then, but the run stands
		}
		run.Server = sw.serverOf(mon, m)
	}
	sw.dropRound(t, nil, "", nil)
	return run, nil
}

// resultOptions are how a run of plan has its ab result built.
func resultOptions(plan measure.Plan) abreport.Options {
	return abreport.Options{VariableLength: plan.AcceptVariableLength, BodySent: len(plan.Body) > 0}
}

// coordinate watches the round until every shard stored its result, and
// merges them. It sets the start once all n joined, fails the job when
// they did not within the shard wait, and gives the round up when a shard
// was lost (errShardLost: the run is redone), failed, or outran the run's
// bound, or when the attempt stops. It returns only after shard 0's
// goroutine did, so no load of the round outlives it here.
func (sw *sweep) coordinate(ctx context.Context, t shardTask, own <-chan error) (*job.Run, error) {
	r := sw.r
	ownDone := false
	var ownErr error
	wait := func() {
		if !ownDone {
			ownErr, ownDone = <-own, true
		}
	}
	defer wait()
	var runBy time.Time // set with the start
	poll := time.NewTimer(shardBarrierPoll)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			r.abortRound(t, abortStopped, "the run's coordinator stopped")
			wait()
			return nil, sw.stopReason()
		case ownErr = <-own:
			ownDone = true
		case <-poll.C:
		}
		st, err := r.st.ShardRoundState(ctx, t.jobID, t.round, t.count)
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("worker: read shard round", "job", t.jobID, "round", t.round, "err", err)
			}
			poll.Reset(shardRunPoll)
			continue
		}
		if st.Abort != "" {
			wait()
			return nil, abortError(parseAbort(st.Abort))
		}
		if ownDone && ownErr != nil && !errors.Is(ownErr, errRoundOver) {
			r.abortRound(t, abortStopped, ownErr.Error())
			return nil, ownErr
		}
		if st.Start.IsZero() {
			switch {
			case len(st.Joined) == t.count:
				if _, err := r.st.StartShards(ctx, t.jobID, t.round, shardStartMargin, t.roundTTL); err != nil && ctx.Err() == nil {
					r.log.Warn("worker: start shard round", "job", t.jobID, "round", t.round, "err", err)
				}
				runBy = time.Now().Add(shardStartMargin + t.runBound)
			case time.Now().After(t.joinBy):
				why := fmt.Sprintf("sweep.shards needed %d free worker processes at once, found %d within %s", t.count, len(st.Joined), r.shardWait)
				r.abortRound(t, abortTooFew, why)
				wait()
				return nil, fmt.Errorf("%w: %s", errShards, why)
			}
			poll.Reset(shardBarrierPoll)
			continue
		}
		if runBy.IsZero() { // started by an earlier coordinator call in this round
			runBy = time.Now().Add(t.runBound)
		}
		if i := lostShard(st, t.count); i >= 0 {
			why := fmt.Sprintf("shard %d's worker %s stopped renewing its lease before it stored a result", i, st.Joined[i])
			r.abortRound(t, abortLost, why)
			wait()
			return nil, fmt.Errorf("%w: %s", errShardLost, why)
		}
		if len(st.Results) == t.count {
			wait()
			return sw.merge(ctx, t)
		}
		if time.Now().After(runBy) {
			why := fmt.Sprintf("the shards did not all finish within the run's bound of %s", t.runBound)
			r.abortRound(t, abortLost, why)
			wait()
			return nil, fmt.Errorf("%w: %s", errShardLost, why)
		}
		poll.Reset(shardRunPoll)
	}
}

// abortError is what an aborted round means to the coordinator.
func abortError(a abortReason) error {
	switch a.Kind {
	case abortFailed:
		return fmt.Errorf("%w: %s", errNeverRuns, a.Msg)
	case abortTooFew:
		return fmt.Errorf("%w: %s", errShards, a.Msg)
	case abortStopped:
		return fmt.Errorf("worker: shard round stopped: %s", a.Msg)
	default:
		return fmt.Errorf("%w: %s", errShardLost, a.Msg)
	}
}

// abortRound gives the round up; a failure is logged only: the shards
// stop anyway once the coordinator's lease runs out.
func (r *Runner) abortRound(t shardTask, kind abortKind, why string) {
	_ = r.giveRoundUp(t, kind, errors.New(why))
}

// merge reads every shard's part and merges them exactly
// (job.MergeShards): counts, bytes and status codes add, histograms merge
// bucket for bucket, and the run spans from the first shard's start to
// the last one's end on Redis's clock. The shards are listed beside it.
func (sw *sweep) merge(ctx context.Context, t shardTask) (*job.Run, error) {
	rctx, cancel := detached(ctx)
	defer cancel()
	raw, err := sw.r.st.ShardResults(rctx, t.jobID, t.round)
	if err != nil {
		return nil, err
	}
	parts := make([]job.Run, t.count)
	shards := make([]job.ShardRun, t.count)
	for i := range t.count {
		var res shardResult
		if err := json.Unmarshal(raw[i], &res); err != nil || res.Run == nil || res.Run.Result == nil {
			return nil, fmt.Errorf("worker: result of shard %d: unreadable (%v)", i, err)
		}
		parts[i] = *res.Run
		shards[i] = job.ShardRun{
			Worker: res.Worker, StartedAt: res.Run.StartedAt, FinishedAt: res.Run.FinishedAt,
			CompleteRequests: res.Run.Result.CompleteRequests, Concurrency: res.Run.Concurrency,
		}
	}
	run, err := job.MergeShards(parts)
	if err != nil {
		return nil, fmt.Errorf("worker: merge the shards of run %v: %w", t.key, err)
	}
	run.Shards = shards
	return run, nil
}

// dropRound ends a round: aborted with why when err is set, its tasks no
// worker picked up deleted, its keys dropped. All best effort: a task left
// finds the round over, and the keys expire.
func (sw *sweep) dropRound(t shardTask, tasks []string, kind abortKind, err error) {
	if err != nil {
		sw.r.abortRound(t, kind, err.Error())
		for _, id := range tasks {
			_ = sw.r.shards.DeleteTask(queue.QueueShards, id) // an active or finished task is not deleted
		}
		return
	}
	ctx, cancel := detached(sw.ctx)
	defer cancel()
	if err := sw.r.st.DropShardRound(ctx, t.jobID, t.round); err != nil {
		sw.r.log.Warn("worker: drop shard round", "job", t.jobID, "round", t.round, "err", err)
	}
}
