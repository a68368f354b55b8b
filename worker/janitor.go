package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
)

// Timings and bounds of the janitor.
const (
	// DefaultJanitorInterval is how often the janitor looks at the
	// archive. asynq archives a dead worker's task only after its lease
	// expired, so a job it strands waits about a minute either way.
	DefaultJanitorInterval = time.Minute
	// A pass reads at most janitorMaxPages pages of janitorPageSize
	// archived tasks and carries on from there the next pass: asynq keeps
	// up to 10,000 of them, most of them jobs that ended long ago.
	janitorPageSize = 100
	janitorMaxPages = 10
)

// archive lists a queue's archived tasks; *asynq.Inspector implements it.
type archive interface {
	ListArchivedTasks(queue string, opts ...asynq.ListOption) ([]*asynq.TaskInfo, error)
}

// resumeBatch bounds the crashed jobs one resume pass looks at.
const resumeBatch = 100

// janitor has two rounds. Every few seconds it resumes the jobs whose
// attempt died: running, with no live lease (lease.go). It queues a resume
// task for each, whose attempt takes the job over (job.Start counts the
// crash); the dead attempt's own task stays active in asynq until asynq's
// lease on it runs out, a minute or more later, and then finds the job in
// other hands. Every JanitorInterval it ends the jobs whose task asynq
// archived without a handler running: a worker that dies on the task's
// last attempt leaves no giveUp behind, asynq's recoverer archives the
// task when its lease expires, and the job would stay queued or running
// forever, holding its quota slot and never sending job.failed. Several
// workers may run one at once; the resume task's ID and abandon let only
// one of them resume, or end and notify, each job.
type janitor struct {
	tasks       archive
	queue       queue.Enqueuer
	r           *Runner
	every       time.Duration
	resumeEvery time.Duration
	log         *slog.Logger

	// Between passes, touched only by the loop goroutine.
	page int // the next page to read (1-based): a pass goes on from here
	// settled and seen hold the archived tasks that need nothing more,
	// found in the previous and in the current round through the archive:
	// they are skipped without reading their job, and a task that left the
	// archive is forgotten after a round.
	settled, seen map[string]bool
	// unnotified holds jobs the janitor ended whose notice was not
	// queued; the next pass tells the notifier again (it sends each event
	// once).
	unnotified map[string]bool

	mu     sync.Mutex
	cancel context.CancelFunc // set while running
	done   chan struct{}
}

func newJanitor(tasks archive, q queue.Enqueuer, r *Runner, every, resumeEvery time.Duration, log *slog.Logger) *janitor {
	return &janitor{tasks: tasks, queue: q, r: r, every: every, resumeEvery: resumeEvery, log: log, page: 1,
		settled: map[string]bool{}, seen: map[string]bool{}, unnotified: map[string]bool{}}
}

// start runs a pass every interval until stop.
func (jn *janitor) start() {
	jn.mu.Lock()
	defer jn.mu.Unlock()
	if jn.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	jn.cancel, jn.done = cancel, make(chan struct{})
	go jn.loop(ctx, jn.done)
}

// stop ends the loop and waits for the pass under way, if any.
func (jn *janitor) stop() {
	jn.mu.Lock()
	defer jn.mu.Unlock()
	if jn.cancel == nil {
		return
	}
	jn.cancel()
	<-jn.done
	jn.cancel = nil
}

func (jn *janitor) loop(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(jn.every)
	defer tick.Stop()
	resume := time.NewTicker(jn.resumeEvery)
	defer resume.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-resume.C:
			jn.resume(ctx)
		case <-tick.C:
			jn.pass(ctx)
		}
	}
}

// resume queues a resume task for every running job whose lease ran out.
// Jobs started before leases existed (attempt 0) are left to asynq's own
// recovery: their worker, if alive, renews no lease.
func (jn *janitor) resume(ctx context.Context) {
	ids, err := jn.r.st.UnleasedRunning(ctx, resumeBatch)
	if err != nil {
		if ctx.Err() == nil {
			jn.log.Warn("worker: janitor: list crashed jobs", "err", err)
		}
		return
	}
	for _, id := range ids {
		j, err := jn.r.st.GetJob(ctx, id)
		if err != nil || j.Status != job.StatusRunning || j.Attempt == 0 {
			continue // gone, or moved on since the listing
		}
		task, err := queue.NewJobResumeTask(id, j.Attempt, j.Spec.Estimate())
		if err != nil {
			jn.log.Warn("worker: janitor: resume task", "job", id, "err", err)
			continue
		}
		_, err = jn.queue.EnqueueContext(ctx, task)
		switch {
		case errors.Is(err, asynq.ErrTaskIDConflict):
			// Another janitor queued it, or its attempt ran already.
		case err != nil:
			if ctx.Err() == nil {
				jn.log.Warn("worker: janitor: queue resume task", "job", id, "err", err)
			}
		default:
			jn.log.Warn("worker: job's worker died; resuming the job", "job", id, "attempt", j.Attempt,
				"holder", j.Holder, "crashes", j.Crashes, "runs_done", j.Progress.RunsDone)
		}
	}
}

// pass settles the archived tasks of the jobs queue, page by page. When
// nothing is archived it costs one small script in Redis. A Redis error
// ends the pass; the next one tries again from the same page.
func (jn *janitor) pass(ctx context.Context) {
	for range janitorMaxPages {
		tasks, err := jn.tasks.ListArchivedTasks(queue.QueueJobs, asynq.PageSize(janitorPageSize), asynq.Page(jn.page))
		switch {
		case errors.Is(err, asynq.ErrQueueNotFound): // no job task was ever enqueued
			tasks = nil
		case err != nil:
			jn.log.Warn("worker: janitor: list archived job tasks", "page", jn.page, "err", err)
			return
		}
		for _, ti := range tasks {
			if ctx.Err() != nil {
				return
			}
			if jn.settled[ti.ID] || jn.seen[ti.ID] || jn.settle(ctx, ti) {
				jn.seen[ti.ID] = true
			}
		}
		if len(tasks) < janitorPageSize { // the end of the archive: a new round next pass
			jn.page = 1
			jn.settled, jn.seen = jn.seen, map[string]bool{}
			return
		}
		jn.page++
	}
}

// settle ends the job of archived task ti if it is not over yet, and
// reports whether the task needs nothing more.
func (jn *janitor) settle(ctx context.Context, ti *asynq.TaskInfo) bool {
	p, err := queue.ParseJobRun(asynq.NewTask(ti.Type, ti.Payload))
	if err != nil {
		return true // no job to end; its handler said so when it archived it
	}
	id := p.JobID
	j, err := jn.r.st.GetJob(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		delete(jn.unnotified, id)
		return true // expired, or never stored
	case err != nil:
		if ctx.Err() == nil {
			jn.log.Warn("worker: janitor: read job", "job", id, "err", err)
		}
		return false
	case !j.Status.Terminal() && j.CurrentTask() != ti.ID:
		return true // superseded by a resume task, whose attempt has the job
	case j.Status.Terminal():
		if !jn.unnotified[id] {
			return true
		}
		if err := jn.r.notify(ctx, j, job.EventFor(j.Status)); err != nil {
			jn.log.Warn("worker: janitor: notify job end", "job", id, "err", err)
			return false
		}
		delete(jn.unnotified, id)
		return true
	}
	lastErr := ti.LastErr
	if lastErr == "" {
		lastErr = "no error recorded"
	}
	// Detached: once the job is ended, its event and notice must follow
	// even if the worker is shutting down.
	actx, cancel := detached(ctx)
	defer cancel()
	_, err = jn.r.abandon(actx, id, fmt.Sprintf("its task was archived after its last attempt: %s", lastErr))
	switch {
	case err == nil, errors.Is(err, errFinished), errors.Is(err, store.ErrNotFound):
		return true // errFinished: another worker's janitor, or a late handler, ended it
	case errors.Is(err, errNotifyLost):
		jn.log.Warn("worker: janitor: notify job end", "job", id, "err", err)
		jn.unnotified[id] = true
		return false
	default:
		jn.log.Warn("worker: janitor: end job of archived task", "job", id, "task", ti.ID, "err", err)
		return false
	}
}
