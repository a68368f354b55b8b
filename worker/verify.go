package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/targetverify"
)

// TargetChecker verifies that a job's target hosts serve their owner's
// tokens and returns the IPs that served them; *targetverify.Verifier
// implements it.
type TargetChecker interface {
	VerifySpec(ctx context.Context, owner string, targets []job.TargetURL) (netguard.Pins, error)
}

// checkTargets runs before an attempt's first request. The API checked
// the hosts at submission, but a token may be withdrawn while the job
// waits: such a job fails with the reason and sends no load at all. A
// spec the check refuses outright (a Host header naming another host, too
// many hosts) fails the same way.
func (sw *sweep) checkTargets() error {
	if sw.r.targets == nil || len(sw.todo) == 0 {
		return nil
	}
	pins, err := sw.r.targets.VerifySpec(sw.ctx, sw.job.Owner, sw.planner.TargetURLs())
	switch {
	case err == nil:
		sw.pins = pins
		return nil
	case errors.Is(err, targetverify.ErrUnverified), errors.Is(err, job.ErrInvalid):
		return fmt.Errorf("%w: %w", errNeverRuns, err)
	default: // the store: asynq retries
		return fmt.Errorf("worker: verify targets: %w", err)
	}
}

// guard is the address policy of the sweep's load. After verification
// it confines each host to the IPs that just served its token
// (netguard.LoadGuard's pins): looking the name up again would let
// whoever controls its DNS point the verified name at someone else's
// server. Pinning rather than refusing a changed answer also means no
// second lookup an attacker could time.
func (sw *sweep) guard() measure.Guard {
	return &netguard.LoadGuard{Policy: sw.r.policy, Resolver: sw.r.resolver, Pins: sw.pins}
}
