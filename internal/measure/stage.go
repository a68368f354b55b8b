package measure

import (
	"fmt"
	"math"
	"time"
)

// Stage is one leg of a ramp, as k6's ramping-arrival-rate and ramping-vus
// executors take them: over Duration the run's rate (Rate) or its
// concurrency (Concurrency) goes linearly from where the previous stage
// ended to the stage's own value. A stage of zero Duration jumps to its
// value at once. A plan's stages are all rate stages (the open model) or
// all concurrency stages (the closed model); the other field is zero.
type Stage struct {
	Duration    time.Duration
	Rate        float64 // request starts per second at the stage's end
	Concurrency int     // connections at the stage's end
}

// StagesDuration is how long stages last together: a staged run's duration.
func StagesDuration(stages []Stage) time.Duration {
	var d time.Duration
	for _, s := range stages {
		d += s.Duration
	}
	return d
}

// RateRamp reports whether p's open-model rate follows Stages.
func (p Plan) RateRamp() bool { return len(p.Stages) > 0 && p.Stages[0].Concurrency == 0 }

// ConcurrencyRamp reports whether p's closed-model concurrency follows
// Stages.
func (p Plan) ConcurrencyRamp() bool { return len(p.Stages) > 0 && p.Stages[0].Concurrency > 0 }

// Open reports whether p runs the open model: a rate, fixed or ramped.
func (p Plan) Open() bool { return p.Rate > 0 || p.RateRamp() }

// MaxStageConcurrency is the highest concurrency p's stages reach, the
// workers a concurrency ramp needs; zero without concurrency stages.
func (p Plan) MaxStageConcurrency() int {
	n := 0
	for _, s := range p.Stages {
		n = max(n, s.Concurrency)
	}
	return n
}

// validateStages adds to bad every problem of p's stages, each named by
// its field ("stages[1].rate").
func (p Plan) validateStages(bad func(field, format string, args ...any)) {
	if len(p.Stages) == 0 {
		return
	}
	rates := p.RateRamp()
	var peak float64
	for i, s := range p.Stages {
		field := fmt.Sprintf("stages[%d]", i)
		if s.Duration < 0 {
			bad(field+".duration", "%v is negative", s.Duration)
		}
		switch {
		case rates && s.Concurrency != 0:
			bad(field+".concurrency", "a stage sets a rate or a concurrency, and stages[0] sets a rate")
		case rates && (math.IsNaN(s.Rate) || math.IsInf(s.Rate, 0) || s.Rate < 0):
			bad(field+".rate", "%v is not a non-negative number", s.Rate)
		case !rates && s.Rate != 0:
			bad(field+".rate", "a stage sets a rate or a concurrency, and stages[0] sets a concurrency")
		case !rates && (s.Concurrency < 0 || s.Concurrency > MaxConcurrency):
			bad(field+".concurrency", "%d is outside 0..%d", s.Concurrency, MaxConcurrency)
		}
		peak = max(peak, s.Rate, float64(s.Concurrency))
	}
	total := StagesDuration(p.Stages)
	switch {
	case total <= 0:
		bad("stages", "the stages last no time: a ramp needs a duration")
	case p.Duration != 0 && p.Duration != total:
		bad("duration", "%v differs from the stages' %v: a staged run lasts its stages", p.Duration, total)
	}
	if peak <= 0 && !(rates && p.Rate > 0) {
		bad("stages", "every stage is at zero: nothing would be sent")
	}
	if p.Warmup > 0 {
		bad("warmup", "a ramp has no steady window to measure after a warm-up")
	}
	if p.HTTPVersion == HTTP2 {
		bad("stages", "ramps are not supported on HTTP/2 yet")
	}
	if !rates && p.Rate > 0 {
		bad("rate", "a concurrency ramp is the closed model: it takes no rate")
	}
	if n := p.MaxStageConcurrency(); !rates && p.Concurrency != 0 && p.Concurrency < n {
		bad("concurrency", "%d is below the stages' highest concurrency, %d", p.Concurrency, n)
	}
}
