package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/targetverify"
)

// TargetChecker verifies that a job's target hosts serve their owner's
// tokens; *targetverify.Verifier implements it.
type TargetChecker interface {
	CheckSpec(ctx context.Context, owner string, targets []job.TargetURL) error
}

// checkTargets runs before an attempt's first request. The API checked
// the hosts at submission, but a token may be withdrawn while the job
// waits: such a job fails with the reason and sends no load at all.
func (sw *sweep) checkTargets() error {
	if sw.r.targets == nil || len(sw.todo) == 0 {
		return nil
	}
	err := sw.r.targets.CheckSpec(sw.ctx, sw.job.Owner, sw.job.Spec.TargetURLs())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, targetverify.ErrUnverified):
		return fmt.Errorf("%w: %w", errNeverRuns, err)
	default: // the store: asynq retries
		return fmt.Errorf("worker: verify targets: %w", err)
	}
}
