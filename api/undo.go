package api

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
	undoAttemptTimeout = 2 * time.Second
	undoFirstWait      = 100 * time.Millisecond
	undoMaxWait        = 2 * time.Second
	maxPendingUndos    = 1000
	// undoRetryFor is how long an undo waits for Redis to come back. A
	// job left past it stays queued with no task, holding its slot, until
	// an operator removes it; the log names it.
	undoRetryFor = 10 * time.Minute
)

// undoer undoes what a request wrote before it failed. The first attempt
// runs at once; when Redis is unavailable (so the undo failed for the
// reason the request did), it is retried in the background until it
// succeeds, fails for another reason, its time is up (past it the undo
// no longer matters or an operator must look), or the server shuts down.
// Each undo must be idempotent.
type undoer struct {
	closing context.Context
	log     *slog.Logger
	wg      sync.WaitGroup
	slots   chan struct{}
}

func newUndoer(closing context.Context, log *slog.Logger) *undoer {
	return &undoer{closing: closing, log: log, slots: make(chan struct{}, maxPendingUndos)}
}

// run undoes what with fn, retrying within the given time.
func (u *undoer) run(what string, within time.Duration, fn func(context.Context) error) {
	err := u.attempt(fn)
	if err == nil {
		return
	}
	if !errors.Is(err, store.ErrUnavailable) {
		u.log.Error("api: undo failed; left half-done", "undo", what, "err", err)
		return
	}
	select {
	case u.slots <- struct{}{}:
	default:
		u.log.Error("api: too many undos waiting for redis; left half-done", "undo", what, "err", err)
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
func (u *undoer) retry(what string, deadline time.Time, fn func(context.Context) error, err error) {
	ctx, cancel := context.WithDeadline(u.closing, deadline)
	defer cancel()
	err = store.RetryUnavailable(ctx, err, undoFirstWait, undoMaxWait, func(context.Context) error { return u.attempt(fn) })
	switch {
	case errors.Is(err, store.ErrUnavailable) && u.closing.Err() != nil:
		u.log.Error("api: shutting down; undo abandoned, left half-done", "undo", what, "err", err)
	case errors.Is(err, store.ErrUnavailable):
		u.log.Error("api: redis stayed unavailable; undo abandoned, left half-done", "undo", what, "err", err)
	case err != nil:
		u.log.Error("api: undo failed; left half-done", "undo", what, "err", err)
	default:
		u.log.Info("api: undone once redis answered", "undo", what)
	}
}

func (u *undoer) attempt(fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), undoAttemptTimeout)
	defer cancel()
	return fn(ctx)
}

// wait waits for the background undos, which stop once the server is
// closing, until ctx ends.
func (u *undoer) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		u.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("api: shutdown: undos still running: %w", ctx.Err())
	}
}
