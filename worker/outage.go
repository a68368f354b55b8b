package worker

import (
	"context"
	"time"

	"github.com/benchq/benchq/internal/store"
)

// Waits between tries of a write that found Redis unavailable.
const (
	outageRetryFirst = 100 * time.Millisecond
	outageRetryMax   = time.Second
)

// throughOutage runs write until it stops failing with
// store.ErrUnavailable, for at most bound. It is for the writes that end
// an attempt (its finish, its hand-back, giving up its lease): a Redis
// that restarts while a run is in flight must not turn the attempt into a
// crash that the job's lease, seconds later, reports and the crash budget
// counts. While the attempt's lease has not run out no other attempt can
// hold the job, so bound is the lease's length; a write that comes later
// than that is refused by the attempt number anyway.
func throughOutage(ctx context.Context, bound time.Duration, write func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	return store.RetryUnavailable(ctx, write(ctx), outageRetryFirst, outageRetryMax, write)
}
