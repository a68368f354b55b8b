package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
)

// progressSink is where progress goes: the job's progress key, read by GET
// /v1/jobs/{id}, and its event stream, read by the SSE endpoint.
type progressSink interface {
	SetProgress(ctx context.Context, id string, p job.Progress) error
	AppendEvent(ctx context.Context, jobID string, typ string, data any) error
}

// progressWriter turns the engine's snapshots and the sweep's run
// boundaries into progress writes, at most one per interval: updates only
// replace the pending value, and a ticker writes it when it changed. The
// engine calls back every 250 ms and short runs end in milliseconds, so
// writing on every update would hammer Redis for nothing a client can see.
type progressWriter struct {
	sink     progressSink
	id       string
	interval time.Duration
	log      *slog.Logger

	mu      sync.Mutex
	pending job.Progress
	dirty   bool

	// intervals are the current run's closed timeline intervals; sendMu
	// keeps their events in order between the ticker and sendIntervals.
	intervals intervalFeed
	sendMu    sync.Mutex

	stopCh chan struct{}
	done   chan struct{}
}

func newProgressWriter(sink progressSink, id string, start job.Progress, interval time.Duration, log *slog.Logger) *progressWriter {
	return &progressWriter{
		sink: sink, id: id, interval: interval, log: log, pending: start,
		stopCh: make(chan struct{}), done: make(chan struct{}),
	}
}

// start writes pending progress every interval until stop.
func (w *progressWriter) start(ctx context.Context) {
	go func() {
		defer close(w.done)
		tick := time.NewTicker(w.interval)
		defer tick.Stop()
		for {
			select {
			case <-w.stopCh:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				w.flush(ctx)
			}
		}
	}()
}

// update changes the pending progress; it never blocks on Redis.
func (w *progressWriter) update(fn func(p *job.Progress)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fn(&w.pending)
	w.dirty = true
}

// snapshot is loadgen's Plan.Progress callback.
func (w *progressWriter) snapshot(s measure.Snapshot) {
	w.update(func(p *job.Progress) {
		p.RequestsDone = s.Completed + s.Failed
		p.CurrentRPS = s.CurrentRPS
	})
}

// current returns the pending progress.
func (w *progressWriter) current() job.Progress {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pending
}

// flush writes the pending progress if it changed since the last write,
// and the run's intervals when they are due. Progress is advisory: a
// failed write is logged and the next one retries.
func (w *progressWriter) flush(ctx context.Context) {
	w.sendIntervals(ctx)
	w.mu.Lock()
	p, dirty := w.pending, w.dirty
	if r := p.CurrentRun; r != nil {
		c := *r // the pending value may change while Redis is written
		p.CurrentRun = &c
	}
	w.dirty = false
	w.mu.Unlock()
	if !dirty {
		return
	}
	err := w.sink.SetProgress(ctx, w.id, p)
	if err == nil {
		err = w.sink.AppendEvent(ctx, w.id, job.EventProgress, p)
	}
	if err != nil && ctx.Err() == nil {
		w.log.Warn("worker: write progress", "job", w.id, "err", err)
	}
}

// sendIntervals appends a run.intervals event when the feed has one due.
// Intervals are advisory like progress: a failed write is logged and its
// intervals are not sent again (the stored timeline has them).
func (w *progressWriter) sendIntervals(ctx context.Context) {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	for {
		ev, ok := w.intervals.take(time.Now())
		if !ok {
			return
		}
		if err := w.sink.AppendEvent(ctx, w.id, job.EventRunIntervals, ev); err != nil && ctx.Err() == nil {
			w.log.Warn("worker: append run.intervals event", "job", w.id, "run", ev.RunKey, "err", err)
		}
	}
}

// endRun sends what is left of the run's intervals, before its
// run.finished event.
func (w *progressWriter) endRun(ctx context.Context) {
	w.intervals.end()
	w.sendIntervals(ctx)
}

// stop ends the ticker; the caller writes the final progress itself.
func (w *progressWriter) stop() {
	close(w.stopCh)
	<-w.done
}
