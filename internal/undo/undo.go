package undo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/benchq/benchq/internal/store"
)

// Bounds of undoing: one attempt, the waits between attempts, and how
// many undos may wait for Redis at once (each is one goroutine; only
// requests caught mid-way when Redis failed leave one).
const (
	attemptTimeout = 2 * time.Second
	firstWait      = 100 * time.Millisecond
	maxWait        = 2 * time.Second
	maxPending     = 1000
	// RetryFor is how long an undo usually waits for Redis to come back.
	// A job left past it stays queued with no task, holding its slot,
	// until an operator removes it; the log names it.
	RetryFor = 10 * time.Minute
)

// Undoer undoes what a request wrote before it failed. The first attempt
// runs at once; when Redis is unavailable (so the undo failed for the
// reason the request did), it is retried in the background until it
// succeeds, fails for another reason, its time is up (past it the undo
// no longer matters or an operator must look), or closing ends (the
// server shuts down). Each undo must be idempotent. One Undoer serves a
// process, so that maxPending bounds its waiting undos.
type Undoer struct {
	closing context.Context
	log     *slog.Logger
	wg      sync.WaitGroup
	slots   chan struct{}
}

// New returns an Undoer whose retries stop when closing ends; log gets
// what was left half-done.
func New(closing context.Context, log *slog.Logger) *Undoer {
	return &Undoer{closing: closing, log: log, slots: make(chan struct{}, maxPending)}
}

// Run undoes what with fn, retrying within the given time.
func (u *Undoer) Run(what string, within time.Duration, fn func(context.Context) error) {
	err := u.attempt(fn)
	if err == nil {
		return
	}
	if !errors.Is(err, store.ErrUnavailable) {
		u.log.Error("undo: undo failed; left half-done", "undo", what, "err", err)
		return
	}
	select {
	case u.slots <- struct{}{}:
	default:
		u.log.Error("undo: too many undos waiting for redis; left half-done", "undo", what, "err", err)
		return
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		defer func() { <-u.slots }()
		u.retry(what, time.Now().Add(within), fn, err)
	}()
}

// retry attempts fn with growing waits until it stops failing with
// ErrUnavailable, the deadline passes or the server closes.
func (u *Undoer) retry(what string, deadline time.Time, fn func(context.Context) error, err error) {
	ctx, cancel := context.WithDeadline(u.closing, deadline)
	defer cancel()
	err = store.RetryUnavailable(ctx, err, firstWait, maxWait, func(context.Context) error { return u.attempt(fn) })
	switch {
	case errors.Is(err, store.ErrUnavailable) && u.closing.Err() != nil:
		u.log.Error("undo: shutting down; undo abandoned, left half-done", "undo", what, "err", err)
	case errors.Is(err, store.ErrUnavailable):
		u.log.Error("undo: redis stayed unavailable; undo abandoned, left half-done", "undo", what, "err", err)
	case err != nil:
		u.log.Error("undo: undo failed; left half-done", "undo", what, "err", err)
	default:
		u.log.Info("undo: undone once redis answered", "undo", what)
	}
}

func (u *Undoer) attempt(fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
	defer cancel()
	return fn(ctx)
}

// Wait waits for the background undos, which stop once closing ends,
// until ctx ends.
func (u *Undoer) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		u.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("undo: undos still running: %w", ctx.Err())
	}
}
