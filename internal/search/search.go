package search

import (
	"math"
	"slices"
	"time"
)

// Config bounds a search. Zero fields take the defaults named.
type Config struct {
	// MinRate is the first probe's rate, and the lowest one probed.
	MinRate float64
	// MaxRate is never exceeded: a pass at it ends the search.
	MaxRate float64
	// Precision ends the bisection once the bracket's high edge is
	// within this share above its low edge; zero means 0.05.
	Precision float64
	// Confirm is how many probes each edge of the final bracket gets, so
	// one noisy probe does not decide it; zero means 3. A rate's verdict
	// is its majority, so an odd number avoids ties.
	Confirm int
	// ProbeDuration is how long one probe runs: with MaxDuration and
	// MaxRequests it decides whether the next probe still fits.
	ProbeDuration time.Duration
	// MaxDuration bounds the time all probes take; zero: no bound.
	MaxDuration time.Duration
	// MaxRequests bounds the requests all probes send, counting the next
	// one's at its rate for the whole ProbeDuration; zero: no bound.
	MaxRequests int64
	// MaxProbes bounds the number of probes; zero means 40.
	MaxProbes int
}

// Defaults of Config's zero fields.
const (
	DefaultPrecision = 0.05
	DefaultConfirm   = 3
	DefaultMaxProbes = 40
	// climbFactor multiplies the rate while every probe passes: a
	// doubling reaches 20 000 from 50 in nine probes and leaves a bracket
	// the bisection halves (in log) each probe.
	climbFactor = 2
)

func (c Config) withDefaults() Config {
	if c.Precision <= 0 {
		c.Precision = DefaultPrecision
	}
	if c.Confirm <= 0 {
		c.Confirm = DefaultConfirm
	}
	if c.MaxProbes <= 0 {
		c.MaxProbes = DefaultMaxProbes
	}
	return c
}

// MaxProbes is the most probes a search under cfg runs.
func MaxProbes(cfg Config) int { return cfg.withDefaults().MaxProbes }

// Probe is one probe's outcome.
type Probe struct {
	Rate float64
	// Passed: every SLO held.
	Passed bool
	// ClientSaturated: the load generator could not keep the schedule,
	// so the probe says nothing about the server, and the search stops.
	ClientSaturated bool
	// Requests and Elapsed are what the probe spent; Elapsed is its wall
	// time, warm-up and stop included, which MaxDuration bounds.
	Requests int64
	Elapsed  time.Duration
}

// Reason says why a search ended.
type Reason string

// Reasons a search ends.
const (
	// Converged: the bracket is within Config.Precision and both edges
	// were confirmed.
	Converged Reason = "converged"
	// AtMaxRate: the SLO held at MaxRate; the capacity is at least that.
	AtMaxRate Reason = "max_rate"
	// BelowMinRate: the SLO failed at MinRate.
	BelowMinRate Reason = "min_rate"
	// ClientSaturated: a probe's load generator ran short of CPU; the
	// rates above the last pass measure the client, not the server.
	ClientSaturated Reason = "client_saturated"
	// Budget: the next probe would pass MaxDuration or MaxRequests.
	Budget Reason = "budget"
	// ProbeLimit: MaxProbes were run.
	ProbeLimit Reason = "probe_limit"
)

// Phase names what a probe is for.
type Phase string

// Phases of a search.
const (
	Climb   Phase = "climb"   // doubling from MinRate until a fail
	Bisect  Phase = "bisect"  // halving the bracket between a pass and a fail
	Confirm Phase = "confirm" // repeating an edge of the final bracket
)

// Step is what to do next: probe Rate, or stop for Reason.
type Step struct {
	Rate   float64
	Phase  Phase
	Done   bool
	Reason Reason
}

// Next decides the step after probes (in the order they ran).
func Next(cfg Config, probes []Probe) Step {
	cfg = cfg.withDefaults()
	if slices.ContainsFunc(probes, func(p Probe) bool { return p.ClientSaturated }) {
		return Step{Done: true, Reason: ClientSaturated}
	}
	s := tally(probes)
	step := next(cfg, s)
	if step.Done {
		return step
	}
	if len(probes) >= cfg.MaxProbes {
		return Step{Done: true, Reason: ProbeLimit}
	}
	if !fits(cfg, probes, step.Rate) {
		return Step{Done: true, Reason: Budget}
	}
	return step
}

func next(cfg Config, s rates) Step {
	if len(s) == 0 {
		return Step{Rate: cfg.MinRate, Phase: Climb}
	}
	if r, ok := s.undecided(); ok {
		return Step{Rate: r, Phase: Confirm}
	}
	lo, hi := s.bracket()
	// An end at either bound is confirmed as the bracket's edges are, so
	// one noisy probe at min_rate does not end the search.
	switch {
	case hi == 0 && lo >= cfg.MaxRate && s[lo].n() < cfg.Confirm:
		return Step{Rate: lo, Phase: Confirm}
	case hi == 0 && lo >= cfg.MaxRate:
		return Step{Done: true, Reason: AtMaxRate}
	case hi == 0:
		return Step{Rate: math.Min(lo*climbFactor, cfg.MaxRate), Phase: Climb}
	case lo == 0 && hi <= cfg.MinRate && s[hi].n() < cfg.Confirm:
		return Step{Rate: hi, Phase: Confirm}
	case lo == 0 && hi <= cfg.MinRate:
		return Step{Done: true, Reason: BelowMinRate}
	case lo == 0:
		// A rate once passed failed on a repeat: look below it again.
		return Step{Rate: math.Max(cfg.MinRate, hi/climbFactor), Phase: Bisect}
	case hi > lo*(1+cfg.Precision):
		return Step{Rate: math.Sqrt(lo * hi), Phase: Bisect}
	}
	for _, r := range []float64{lo, hi} {
		if s[r].n() < cfg.Confirm {
			return Step{Rate: r, Phase: Confirm}
		}
	}
	return Step{Done: true, Reason: Converged}
}

// fits says whether a probe at rate stays within the search's budget.
func fits(cfg Config, probes []Probe, rate float64) bool {
	var spent time.Duration
	var sent int64
	for _, p := range probes {
		spent += p.Elapsed
		sent += p.Requests
	}
	if cfg.MaxDuration > 0 && spent+cfg.ProbeDuration > cfg.MaxDuration {
		return false
	}
	next := int64(math.Ceil(rate * cfg.ProbeDuration.Seconds()))
	return cfg.MaxRequests <= 0 || sent+next <= cfg.MaxRequests
}

// Result is a search's answer.
type Result struct {
	// Rate is the estimate of the highest rate at which the SLO holds:
	// the geometric middle of [Low, High], or Low where High is unknown,
	// 0 where nothing passed.
	Rate float64
	// Low is the highest rate whose probes passed (by majority) below
	// High; High the lowest whose probes failed. 0: none such.
	Low, High float64
	Reason    Reason
	Probes    int
	Requests  int64
	Elapsed   time.Duration
}

// Estimate reads the answer from probes, for a search that ended for
// reason (Next's Step.Reason; another reason for a search cut short).
func Estimate(probes []Probe, reason Reason) Result {
	res := Result{Reason: reason, Probes: len(probes)}
	for _, p := range probes {
		res.Requests += p.Requests
		res.Elapsed += p.Elapsed
	}
	res.Low, res.High = tally(probes).bracket()
	switch {
	case res.Low > 0 && res.High > 0:
		res.Rate = math.Sqrt(res.Low * res.High)
	default:
		res.Rate = res.Low
	}
	return res
}

// verdicts counts the probes at one rate.
type verdicts struct{ pass, fail int }

func (v verdicts) n() int { return v.pass + v.fail }

// rates holds the verdicts of every rate probed; a client-saturated probe
// judged nothing and is left out.
type rates map[float64]verdicts

func tally(probes []Probe) rates {
	s := rates{}
	for _, p := range probes {
		if p.ClientSaturated {
			continue
		}
		v := s[p.Rate]
		if p.Passed {
			v.pass++
		} else {
			v.fail++
		}
		s[p.Rate] = v
	}
	return s
}

func (s rates) sorted() []float64 {
	out := make([]float64, 0, len(s))
	for r := range s {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// undecided is the lowest rate whose probes are tied.
func (s rates) undecided() (float64, bool) {
	for _, r := range s.sorted() {
		if v := s[r]; v.pass == v.fail {
			return r, true
		}
	}
	return 0, false
}

// bracket is the lowest failing rate (hi, 0 if none) and the highest
// passing rate below it (lo, 0 if none). A pass above a fail is noise the
// bracket ignores: capacity is where the SLO first fails.
func (s rates) bracket() (lo, hi float64) {
	for _, r := range s.sorted() {
		v := s[r]
		if v.fail > v.pass {
			return lo, r
		}
		if v.pass > v.fail {
			lo = r
		}
	}
	return lo, 0
}
