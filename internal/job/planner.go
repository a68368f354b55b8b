package job

import (
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/monitor"
)

// Planner is a spec resolved once: each target parsed (an ab or http_load
// line costs many times its length to parse) into the engine plan its
// points share, and the sweep expanded into its points. A worker builds
// one per attempt and plans every run and warm-up from it; Spec's own
// Points, Plan, Schedule and Estimate build a throwaway one.
type Planner struct {
	spec    Spec // defaulted
	targets []resolved
	plans   []targetPlan // by target index
	cells   []cell
}

// targetPlan is what every plan of one target shares: all but the point's
// concurrency, stop and rate.
type targetPlan struct {
	base measure.Plan
	err  error // the target's problems, returned by Plan for its points
}

// Planner resolves s for planning. s must be valid (Validate bounds the
// number of points; the Planner expands them all).
func (s Spec) Planner() *Planner {
	pl := s.expansion()
	pl.plans = make([]targetPlan, len(pl.targets))
	for i, r := range pl.targets {
		pl.plans[i] = r.targetPlan()
	}
	return pl
}

// expansion is a Planner without the targets' plans, for the questions
// about the sweep alone (Points, Schedule, Estimate).
func (s Spec) expansion() *Planner {
	d, res := s.resolve()
	return &Planner{spec: d, targets: res, cells: d.expand(d.axesOf(res))}
}

// resolve defaults s and parses each of its targets once: what Validate
// checks and a Planner plans from. Specs are defaulted once where they
// enter (admission) and stored so; defaulting here too is what makes a
// spec as written (a test's, a tool's, the fuzzer's) check and plan as it
// will once stored, and it changes nothing in a stored one.
func (s Spec) resolve() (Spec, []resolved) {
	d := s.WithDefaults()
	return d, d.resolveAll()
}

func (r resolved) targetPlan() targetPlan {
	if len(r.errs) > 0 {
		return targetPlan{err: Invalid(r.errs)}
	}
	req := r.src.req
	tlsOpts, probs := req.TLS.plan()
	if len(probs) > 0 {
		return targetPlan{err: Invalid([]FieldError{{Field: "request.tls." + probs[0].field, Message: probs[0].msg}})}
	}
	var body []byte
	if req.Body != "" {
		body = []byte(req.Body)
	}
	return targetPlan{base: measure.Plan{
		URLs:                 r.src.urls,
		Method:               req.Method,
		Headers:              req.headerList(),
		Body:                 body,
		ContentType:          req.ContentType,
		HTTPVersion:          req.HTTPVersion,
		MaxStreams:           req.MaxStreams,
		UserAgent:            r.src.userAgent,
		KeepAlive:            req.KeepAlive,
		Timeout:              req.Timeout.Std(),
		AcceptVariableLength: req.AcceptVariableLength,
		ContinueOnError:      r.src.continueOnError,
		MaxBody:              req.MaxBody,
		TLS:                  tlsOpts,
	}}
}

// Points is Spec.Points.
func (pl *Planner) Points() []Point {
	points := make([]Point, len(pl.cells))
	for i, c := range pl.cells {
		points[i] = c.Point
	}
	return points
}

// Monitor is the metrics endpoint of p's target, or nil when it names none.
func (pl *Planner) Monitor(p Point) *monitor.Spec {
	if p.TargetIndex < 0 || p.TargetIndex >= len(pl.spec.Targets) {
		return nil
	}
	return pl.spec.Targets[p.TargetIndex].Monitor
}
