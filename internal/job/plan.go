package job

import (
	"errors"
	"fmt"
	"slices"

	"github.com/benchq/benchq/internal/measure"
)

// ErrUnknownPoint is returned by Plan for a point that does not belong to
// the spec.
var ErrUnknownPoint = errors.New("job: point not in spec")

// Plan translates one point of the spec into the engine's plan: the point's
// concurrency, requests, duration and rate, and the target's URLs and
// request options (the target's own request or the job's, or its ab flags).
// Headers are sent sorted by name. The caller adds what the engine needs
// from its environment (Dial, Progress). p must come from s.Points(). It
// parses the spec's targets each time: a caller planning many points plans
// them from one Planner.
func (s Spec) Plan(p Point) (measure.Plan, error) { return s.Planner().Plan(p) }

// WarmupPlan is the plan of the warm-up sent before each run of p: the
// same requests at the same concurrency, sweep.warmup_requests of them, in
// the closed model; its result is discarded. ok is false when the sweep
// asks for no warm-up.
func (s Spec) WarmupPlan(p Point) (plan measure.Plan, ok bool, err error) {
	return s.Planner().WarmupPlan(p)
}

// Plan is Spec.Plan.
func (pl *Planner) Plan(p Point) (measure.Plan, error) {
	if p.TargetIndex < 0 || p.TargetIndex >= len(pl.spec.Targets) || pl.spec.Targets[p.TargetIndex].Name != p.Target {
		return measure.Plan{}, fmt.Errorf("%w: target %d %q", ErrUnknownPoint, p.TargetIndex, p.Target)
	}
	tp := pl.plans[p.TargetIndex]
	if tp.err != nil {
		return measure.Plan{}, tp.err
	}
	plan := tp.base
	// Each plan owns its slices: a caller may change the plan it got.
	plan.URLs = slices.Clone(plan.URLs)
	plan.Headers = slices.Clone(plan.Headers)
	plan.Body = slices.Clone(plan.Body)
	plan.Concurrency, plan.Requests, plan.Duration, plan.Rate = p.Concurrency, p.Requests, p.Duration.Std(), p.Rate
	plan.Stages = nil
	switch {
	case len(pl.spec.Stages) > 0:
		plan.Stages = stagesPlan(pl.spec.Stages)
		plan.Rate = 0 // rate stages ramp from zero; concurrency stages are the closed model
	case p.RateTo > 0 && p.RateTo != p.Rate:
		plan.Stages = []measure.Stage{{Duration: plan.Duration, Rate: p.RateTo}}
	}
	plan.TimelineInterval = pl.spec.Timeline.interval()
	plan.Warmup = pl.spec.Warmup.Std()
	return plan, nil
}

// WarmupPlan is Spec.WarmupPlan.
func (pl *Planner) WarmupPlan(p Point) (plan measure.Plan, ok bool, err error) {
	n := pl.spec.Sweep.WarmupRequests
	if n <= 0 {
		return measure.Plan{}, false, nil
	}
	plan, err = pl.Plan(p)
	if err != nil {
		return measure.Plan{}, false, err
	}
	plan.Requests, plan.Duration, plan.Rate, plan.Warmup, plan.Stages = n, 0, 0, 0, nil
	plan.Concurrency = min(plan.Concurrency, n) // ab's rule: no more workers than requests
	plan.ContinueOnError = true
	return plan, true, nil
}
