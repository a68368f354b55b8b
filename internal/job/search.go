package job

import (
	"math"
	"slices"
	"time"

	"github.com/benchq/benchq/internal/search"
)

// Search asks for each target's capacity: the highest open-model rate at
// which every SLO holds. The worker finds it with probes, each an
// open-model run of ProbeDuration at a rate the search chooses from the
// probes before it (internal/search): a climb from MinRate that doubles
// the rate until an SLO fails, a bisection of the bracket between the
// last pass and the first fail, then repeats of the bracket's edges. It
// runs after the sweep, target by target, and never above MaxRate.
type Search struct {
	// SLO lists the objectives a rate must meet, in the thresholds'
	// syntax without a target or a baseline ("p99_ms < 50").
	SLO     []string `json:"slo" maxItems:"16" example:"p99_ms < 50"`
	MinRate float64  `json:"min_rate" example:"50"`
	MaxRate float64  `json:"max_rate" example:"20000"`
	// ProbeDuration is each probe's length (default 5s, at least 1s, so
	// the load generator's CPU can be judged).
	ProbeDuration Duration `json:"probe_duration,omitempty" example:"5s"`
	// MaxDuration bounds the probes of one target together (default 5m).
	MaxDuration Duration `json:"max_duration,omitempty" example:"5m"`
	// MaxRequests bounds the requests of one target's probes together;
	// unset, MaxDuration and MaxRate bound them.
	MaxRequests int64 `json:"max_requests,omitempty" example:"1000000"`
	// Concurrency caps a probe's requests in flight (default 1000): above
	// the target's capacity the line grows, and a cap reached delays the
	// schedule, which the latencies, measured from each intended start,
	// still show.
	Concurrency int `json:"concurrency,omitempty" example:"1000"`
	// Precision ends the bisection once the bracket's high edge is within
	// this share above its low edge (default 0.05).
	Precision float64 `json:"precision,omitempty" example:"0.05"`
	// Confirm is how many probes each edge of the final bracket gets
	// (default 3); a rate's verdict is its probes' majority.
	Confirm int `json:"confirm,omitempty" example:"3"`
}

// Defaults of Search's optional fields.
const (
	DefaultProbeDuration     = 5 * time.Second
	DefaultSearchDuration    = 5 * time.Minute
	DefaultSearchConcurrency = 1000
	DefaultSearchPrecision   = 0.05
	DefaultSearchConfirm     = 3
	minProbeDuration         = time.Second
	maxSearchConfirm         = 9
)

// WithDefaults fills the optional fields.
func (s Search) WithDefaults() Search {
	if s.ProbeDuration == 0 {
		s.ProbeDuration = Duration(DefaultProbeDuration)
	}
	if s.MaxDuration == 0 {
		s.MaxDuration = Duration(DefaultSearchDuration)
	}
	if s.Concurrency == 0 {
		s.Concurrency = DefaultSearchConcurrency
	}
	if s.Precision == 0 {
		s.Precision = DefaultSearchPrecision
	}
	if s.Confirm == 0 {
		s.Confirm = DefaultSearchConfirm
	}
	return s
}

// Config is the search's bounds as internal/search takes them.
func (s Search) Config() search.Config {
	d := s.WithDefaults()
	return search.Config{
		MinRate: d.MinRate, MaxRate: d.MaxRate, Precision: d.Precision, Confirm: d.Confirm,
		ProbeDuration: d.ProbeDuration.Std(), MaxDuration: d.MaxDuration.Std(), MaxRequests: d.MaxRequests,
	}
}

// estimate is an upper bound of one target's probes' wall time: the
// search counts a probe's wall time against MaxDuration, so at most
// MaxDuration/ProbeDuration probes run (and never more than
// search.MaxProbes), each its duration, the spec's warm-up, the last
// answers' timeout and a run's overhead.
func (s Search) estimate(warmup, timeout time.Duration) time.Duration {
	c := s.Config()
	n := min(search.MaxProbes(c), int(c.MaxDuration/max(c.ProbeDuration, 1)))
	return mulSat(c.ProbeDuration+max(warmup, 0)+timeout+estimateRunOverhead, n)
}

// SLOs parses the SLO list; Validate has refused a spec where it fails.
func (s Search) SLOs() ([]Threshold, error) {
	out := make([]Threshold, 0, len(s.SLO))
	for _, raw := range s.SLO {
		t, err := ParseThreshold(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// AbortRules are the SLO's objectives a probe can be judged on while it
// goes (abortable counts and ratios under an upper bound), to end the
// probe once one is certainly broken: the probe has failed then, and
// running it to its end would only load a target past its capacity.
func (s Search) AbortRules() []AbortRule {
	var out []AbortRule
	for _, raw := range s.SLO {
		th, err := parseThreshold(raw)
		if err != nil || !slices.Contains(abortable, th.Metric) || (th.Op != "<" && th.Op != "<=") {
			continue
		}
		out = append(out, AbortRule{Threshold: th, Text: raw, Scope: AbortRun, After: DefaultAbortAfter})
	}
	return out
}

func (v *validator) search(s Spec) {
	if s.Search == nil {
		return
	}
	se := s.Search.WithDefaults()
	if len(se.SLO) == 0 {
		v.add("search.slo", "at least one objective is required, e.g. \"p99_ms < 50\"")
	}
	for i, raw := range se.SLO {
		th, err := parseThreshold(raw)
		switch {
		case err != nil:
			v.add(index("search.slo", i), "%v", err)
		case th.Target != "":
			v.add(index("search.slo", i), "an objective holds for every target: leave out %q", th.Target+":")
		case th.RefersToBaseline():
			v.add(index("search.slo", i), "an objective is a fixed bound, not baseline.%s", th.Baseline)
		}
	}
	v.rate("search.min_rate", se.MinRate)
	v.rate("search.max_rate", se.MaxRate)
	if se.MaxRate < se.MinRate {
		v.add("search.max_rate", "%v is below min_rate %v", se.MaxRate, se.MinRate)
	}
	v.searchBounds(se)
	if s.ShardCount() > 1 {
		v.add("search", "a search runs its probes on one worker: leave out sweep.shards")
	}
}

func (v *validator) searchBounds(se Search) {
	switch d := se.ProbeDuration.Std(); {
	case d < minProbeDuration:
		v.add("search.probe_duration", "%v is below %v, too short to judge the load generator's CPU", d, minProbeDuration)
	case d > v.lim.MaxDuration:
		v.add("search.probe_duration", "%v is above the limit of %v", d, v.lim.MaxDuration)
	}
	switch d := se.MaxDuration.Std(); {
	case d < se.ProbeDuration.Std():
		v.add("search.max_duration", "%v is shorter than one probe (%v)", d, se.ProbeDuration.Std())
	case d > v.lim.MaxDuration:
		v.add("search.max_duration", "%v is above the limit of %v", d, v.lim.MaxDuration)
	}
	if se.MaxRequests < 0 {
		v.add("search.max_requests", "%d is below 0", se.MaxRequests)
	}
	v.concurrency("search.concurrency", se.Concurrency)
	if math.IsNaN(se.Precision) || se.Precision <= 0 || se.Precision > 1 {
		v.add("search.precision", "want a share above 0 and at most 1, e.g. 0.05")
	}
	if se.Confirm < 1 || se.Confirm > maxSearchConfirm {
		v.add("search.confirm", "want 1 to %d probes", maxSearchConfirm)
	}
}

// Probe runs are stored beside the sweep's under keys of their own: the
// point is below zero, -1 - the target's index, and the repeat numbers
// the target's probes in the order they ran. Every reader of a sweep's
// points (analysis, reports) skips a run naming no point, so they never
// mistake a probe for a repeat.

// ProbeKey is the key of target's n-th probe (from 0).
func ProbeKey(target, n int) RunKey { return RunKey{Point: -1 - target, Repeat: n} }

// Probe says whether k is a probe's key, and whose.
func (k RunKey) Probe() (target, n int, ok bool) {
	if k.Point >= 0 {
		return 0, 0, false
	}
	return -1 - k.Point, k.Repeat, true
}
