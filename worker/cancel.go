package worker

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"
)

// cancelFlag is the store's cheap check of a job's cancel flag.
type cancelFlag interface {
	CancelRequested(ctx context.Context, id string) (bool, error)
}

// cancelWatch polls a job's cancel flag in its own goroutine and cancels
// the context the sweep's load runs under as soon as it is seen. loadgen
// stops within a second of its context ending, so a DELETE stops the load
// within a poll interval plus a second.
type cancelWatch struct {
	ctx    context.Context // canceled when the flag is seen or the parent ends
	seen   atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
}

// watchCancel starts polling job id's flag every interval; stop must be
// called when the sweep ends.
func watchCancel(parent context.Context, flags cancelFlag, id string, interval time.Duration, log *slog.Logger) *cancelWatch {
	ctx, cancel := context.WithCancel(parent)
	w := &cancelWatch{ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go w.poll(flags, id, interval, log)
	return w
}

func (w *cancelWatch) poll(flags cancelFlag, id string, interval time.Duration, log *slog.Logger) {
	defer close(w.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if w.check(flags, id, interval, log) {
			return
		}
		select {
		case <-w.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// check looks once; a Redis error is logged and the next poll tries again
// (the load goes on meanwhile: a hiccup must not cancel a benchmark).
func (w *cancelWatch) check(flags cancelFlag, id string, timeout time.Duration, log *slog.Logger) bool {
	ctx, cancel := context.WithTimeout(w.ctx, max(timeout, time.Second))
	defer cancel()
	requested, err := flags.CancelRequested(ctx, id)
	if err != nil {
		if w.ctx.Err() == nil {
			log.Warn("worker: poll cancel flag", "job", id, "err", err)
		}
		return false
	}
	if requested {
		w.seen.Store(true)
		w.cancel()
	}
	return requested
}

// canceled reports whether the job's cancel flag was seen.
func (w *cancelWatch) canceled() bool { return w.seen.Load() }

// stop ends the polling and waits for the poller to return.
func (w *cancelWatch) stop() {
	w.cancel()
	<-w.done
}
