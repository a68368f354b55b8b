package job

import (
	"errors"
	"fmt"

	"github.com/benchq/benchq/internal/measure"
)

// ErrUnknownPoint is returned by Plan for a point that does not belong to
// the spec.
var ErrUnknownPoint = errors.New("job: point not in spec")

// Plan translates one point of the spec into the engine's plan: the point's
// concurrency, requests, duration and rate, and the target's URLs and
// request options (the target's own request or the job's, or its ab flags).
// Headers are sent sorted by name. The caller adds what the engine needs
// from its environment (Dial, Progress). p must come from s.Points().
func (s Spec) Plan(p Point) (measure.Plan, error) {
	d := s.WithDefaults()
	if p.TargetIndex < 0 || p.TargetIndex >= len(d.Targets) || d.Targets[p.TargetIndex].Name != p.Target {
		return measure.Plan{}, fmt.Errorf("%w: target %d %q", ErrUnknownPoint, p.TargetIndex, p.Target)
	}
	src, errs := d.resolveTarget(p.TargetIndex)
	if len(errs) > 0 {
		return measure.Plan{}, Invalid(errs)
	}
	r := src.req
	tlsOpts, probs := r.TLS.plan()
	if len(probs) > 0 {
		return measure.Plan{}, Invalid([]FieldError{{Field: "request.tls." + probs[0].field, Message: probs[0].msg}})
	}
	var body []byte
	if r.Body != "" {
		body = []byte(r.Body)
	}
	return measure.Plan{
		URLs:                 append([]string(nil), src.urls...),
		Method:               r.Method,
		Headers:              r.headerList(),
		Body:                 body,
		ContentType:          r.ContentType,
		HTTPVersion:          r.HTTPVersion,
		MaxStreams:           r.MaxStreams,
		UserAgent:            src.userAgent,
		KeepAlive:            r.KeepAlive,
		Concurrency:          p.Concurrency,
		Requests:             p.Requests,
		Duration:             p.Duration.Std(),
		Rate:                 p.Rate,
		Timeout:              r.Timeout.Std(),
		AcceptVariableLength: r.AcceptVariableLength,
		ContinueOnError:      src.continueOnError,
		MaxBody:              r.MaxBody,
		TLS:                  tlsOpts,
		TimelineInterval:     s.Timeline.interval(),
	}, nil
}

// WarmupPlan is the plan of the warm-up sent before each run of p: the
// same requests at the same concurrency, sweep.warmup_requests of them, in
// the closed model; its result is discarded. ok is false when the sweep
// asks for no warm-up.
func (s Spec) WarmupPlan(p Point) (plan measure.Plan, ok bool, err error) {
	n := s.Sweep.WarmupRequests
	if n <= 0 {
		return measure.Plan{}, false, nil
	}
	plan, err = s.Plan(p)
	if err != nil {
		return measure.Plan{}, false, err
	}
	plan.Requests, plan.Duration, plan.Rate = n, 0, 0
	plan.Concurrency = min(plan.Concurrency, n) // ab's rule: no more workers than requests
	plan.ContinueOnError = true
	return plan, true, nil
}
