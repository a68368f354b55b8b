package store

import (
	"context"
	"errors"
	"time"
)

// RetryUnavailable runs op again while its last error, err, wraps
// ErrUnavailable: it waits first, then twice as long before each next try,
// at most maxWait, until op stops failing that way or ctx ends. It returns
// op's last error (err itself when that was not an outage). Every caller
// that must ride out a Redis restart (the end of a worker's attempt, the
// API undoing a half-done request) retries this one way.
func RetryUnavailable(ctx context.Context, err error, first, maxWait time.Duration, op func(context.Context) error) error {
	wait := first
	for errors.Is(err, ErrUnavailable) {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, maxWait)
		err = op(ctx)
	}
	return err
}
