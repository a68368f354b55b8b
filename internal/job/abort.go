package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchq/benchq/internal/measure"
)

// ThresholdEntry is one entry of spec.thresholds. In JSON it is either the
// threshold itself, "failed_ratio < 0.01", or an object that also marks it
// to abort: {"threshold": "failed_ratio < 0.01", "abort": true,
// "abort_after": 200}, as k6's abortOnFail does. A threshold marked so is
// judged while each run goes, and once it is certainly broken the run ends
// there (see AbortRule.Broken); the run is stored with aborted set and the
// verdict fails the threshold.
type ThresholdEntry struct {
	Threshold string `json:"threshold" example:"failed_ratio < 0.01"`
	// Abort is true or "run" to end the run that breaks the threshold,
	// "job" to end the job's remaining runs too: the job then ends failed
	// with the reason. Unset, the threshold is judged at the job's end only.
	Abort AbortScope `json:"abort,omitempty" swaggertype:"string" enums:"run,job" example:"run"`
	// AbortAfter is how many requests a run must have attempted before
	// the threshold is judged (default 100): fewer say too little.
	AbortAfter int `json:"abort_after,omitempty" minimum:"1" maximum:"1000000000" example:"100"`
}

// AbortScope says what a threshold marked to abort ends.
type AbortScope string

// Abort scopes. In JSON, true means AbortRun and false none.
const (
	AbortRun AbortScope = "run"
	AbortJob AbortScope = "job"
)

// DefaultAbortAfter is the zero ThresholdEntry.AbortAfter.
const DefaultAbortAfter = 100

// maxAbortAfter bounds abort_after: a run never gets that far anyway.
const maxAbortAfter = 1_000_000_000

// Thresholds is the entries of raw, plain thresholds without abort.
func Thresholds(raw ...string) []ThresholdEntry {
	out := make([]ThresholdEntry, len(raw))
	for i, s := range raw {
		out[i] = ThresholdEntry{Threshold: s}
	}
	return out
}

// String is the threshold as the spec wrote it.
func (e ThresholdEntry) String() string { return e.Threshold }

// plain reports whether e says no more than its threshold, so it is
// written back as a string, as specs from before abort are.
func (e ThresholdEntry) plain() bool { return e.Abort == "" && e.AbortAfter == 0 }

// MarshalJSON writes a plain entry as its string.
func (e ThresholdEntry) MarshalJSON() ([]byte, error) {
	if e.plain() {
		return json.Marshal(e.Threshold)
	}
	type object ThresholdEntry // without this method, so no recursion
	return json.Marshal(object(e))
}

// UnmarshalJSON reads the string form or the object.
func (e *ThresholdEntry) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*e = ThresholdEntry{}
		return json.Unmarshal(b, &e.Threshold)
	}
	type object ThresholdEntry
	var o object
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*e = ThresholdEntry(o)
	return nil
}

// UnmarshalJSON reads true as "run", false as none, and a string as it
// is (validation refuses one that is not a scope).
func (a *AbortScope) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true":
		*a = AbortRun
		return nil
	case "false":
		*a = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errAbortType
	}
	*a = AbortScope(s)
	return nil
}

var errAbortType = errors.New(`want true, false, "run" or "job"`)

// abortable is what a run can be judged on while it goes: counts that
// only grow and ratios of them, whose bound is an upper one.
var abortable = []string{"failed", "non_2xx", "failed_ratio", "non_2xx_ratio"}

func (v *validator) abort(field string, e ThresholdEntry, th Threshold, shards int) {
	switch e.Abort {
	case "", AbortRun, AbortJob:
	default:
		v.add(field+".abort", "%q is not a scope: %v", e.Abort, errAbortType)
		return
	}
	switch {
	case e.AbortAfter < 0 || e.AbortAfter > maxAbortAfter:
		v.add(field+".abort_after", "%d requests: want 1 to %d", e.AbortAfter, maxAbortAfter)
	case e.AbortAfter > 0 && e.Abort == "":
		v.add(field+".abort_after", "applies to a threshold marked \"abort\" only")
	}
	if e.Abort == "" {
		return
	}
	switch {
	case th.RefersToBaseline():
		v.add(field+".abort", "a threshold relative to the baseline job is judged at the job's end only")
	case !slices.Contains(abortable, th.Metric) || (th.Op != "<" && th.Op != "<="):
		v.add(field+".abort", "%q cannot be judged while a run goes: abort works with %s under an upper bound (< or <=)", th.String(), strings.Join(abortable, ", "))
	case shards > 1:
		// Each shard runs on a worker of its own, which judges only its
		// share; ending the others with it is not built.
		v.add(field+".abort", "not with sweep.shards above 1: a sharded run is not judged while it goes")
	}
}

// AbortRule is a threshold marked to abort, as a run is judged on it
// while it goes.
type AbortRule struct {
	Threshold Threshold
	Text      string // the threshold as the spec wrote it
	Scope     AbortScope
	After     int64 // requests attempted before it is judged
}

// AbortRules returns the thresholds marked to abort that apply to the runs
// of target, in the spec's order; entries that do not parse are left out
// (validation refused them at submission).
func (s Spec) AbortRules(target string) []AbortRule {
	var out []AbortRule
	for _, e := range s.Thresholds {
		if e.Abort == "" {
			continue
		}
		th, err := parseThreshold(e.Threshold)
		if err != nil || (th.Target != "" && th.Target != target) || th.RefersToBaseline() {
			continue
		}
		after := int64(e.AbortAfter)
		if after == 0 {
			after = DefaultAbortAfter
		}
		out = append(out, AbortRule{Threshold: th, Text: e.Threshold, Scope: e.Abort, After: after})
	}
	return out
}

// abortZ is the one-sided 99.9 % quantile of the normal distribution: a
// ratio's Wilson lower bound at it says the rate itself is above the
// value with 99.9 % confidence.
const abortZ = 3.090232306167813

// RunCounts is what a run has counted so far.
type RunCounts struct {
	Completed, Failed, Non2xx int64
}

// Broken reports whether the counts c of a run certainly break r, with a
// reason for a reader. total is the run's request count, 0 when it ends
// by time. Nothing is judged before r.After requests were attempted.
//
// A count ("failed < 10") only grows, so once over its bound it stays
// there. A ratio ("failed_ratio < 0.01") is certainly broken when the
// requests still to come could not bring it back under its bound even if
// they all succeeded (a run of total requests), or when its one-sided
// 99.9 % Wilson lower bound is over the bound: a rate that low would show
// this many failures less than once in a thousand runs. The failure ratio
// counts a request that failed for its length as both attempted and
// completed, which only makes it smaller: it never aborts early for it.
func (r AbortRule) Broken(c RunCounts, total int64) (string, bool) {
	attempted := c.Completed + c.Failed
	if attempted < r.After {
		return "", false
	}
	var bad, n int64
	switch r.Threshold.Metric {
	case "failed", "failed_ratio":
		bad, n = c.Failed, attempted
	case "non_2xx", "non_2xx_ratio":
		bad, n = c.Non2xx, c.Completed
	default:
		return "", false
	}
	bound, op := r.Threshold.Value, r.Threshold.Op
	if !strings.HasSuffix(r.Threshold.Metric, "_ratio") {
		if compareUpper(op, float64(bad), bound) {
			return "", false
		}
		return fmt.Sprintf("%s %d %s %s after %d requests", r.Threshold.Metric, bad, breaks(op), formatNumber(bound), attempted), true
	}
	if n <= 0 {
		return "", false
	}
	ratio := float64(bad) / float64(n)
	if total > 0 && !compareUpper(op, float64(bad)/float64(total), bound) {
		return fmt.Sprintf("%s %.3g %s %s after %d requests: the %d still to come cannot bring it under", r.Threshold.Metric, ratio, breaks(op), formatNumber(bound), attempted, max(0, total-attempted)), true
	}
	low := wilsonLower(bad, n, abortZ)
	if compareUpper(op, low, bound) {
		return "", false
	}
	return fmt.Sprintf("%s %.3g %s %s after %d requests (99.9 %% lower bound %.3g)", r.Threshold.Metric, ratio, breaks(op), formatNumber(bound), attempted, low), true
}

// compareUpper reports whether v keeps the upper bound "op bound".
func compareUpper(op string, v, bound float64) bool {
	if op == "<" {
		return v < bound
	}
	return v <= bound
}

// breaks is the operator a value that breaks "op bound" stands in.
func breaks(op string) string {
	if op == "<" {
		return ">="
	}
	return ">"
}

// wilsonLower is the lower end of the Wilson score interval of k
// successes in n trials at z; exactly 0 for none, where rounding would
// leave a speck above it that breaks a bound of 0.
func wilsonLower(k, n int64, z float64) float64 {
	if k <= 0 {
		return 0
	}
	p, nf := float64(k)/float64(n), float64(n)
	z2 := z * z
	centre := p + z2/(2*nf)
	spread := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return max(0, (centre-spread)/(1+z2/nf))
}

// AbortWatch judges a run on its rules while it goes, as a measure.Plan's
// Watch. A run with a warm-up is judged on its measured window only: the
// counts at the first snapshot after the warm-up are taken off the later
// ones.
type AbortWatch struct {
	rules  []AbortRule
	total  int64
	warmup measure.Snapshot
	plan   measure.Plan
	fired  *AbortRule
}

// NewAbortWatch returns a watch of rules over the run of plan; nil when
// there are no rules.
func NewAbortWatch(rules []AbortRule, plan measure.Plan) *AbortWatch {
	if len(rules) == 0 {
		return nil
	}
	return &AbortWatch{rules: rules, total: int64(plan.Requests), plan: plan}
}

// Watch is the measure.Plan.Watch of the run: the reason of the first
// rule the snapshot certainly breaks, "" while none is.
func (w *AbortWatch) Watch(s measure.Snapshot) string {
	if w.plan.Warmup > 0 {
		if s.Elapsed < w.plan.Warmup {
			return ""
		}
		if w.warmup.Elapsed == 0 {
			w.warmup = s
		}
	}
	c := RunCounts{Completed: s.Completed - w.warmup.Completed, Failed: s.Failed - w.warmup.Failed, Non2xx: s.Non2xx - w.warmup.Non2xx}
	for i := range w.rules {
		if why, broken := w.rules[i].Broken(c, w.total); broken {
			w.fired = &w.rules[i]
			return why
		}
	}
	return ""
}

// Fired is the rule that ended the run; nil when none did. Read it once
// the run is over.
func (w *AbortWatch) Fired() *AbortRule {
	if w == nil {
		return nil
	}
	return w.fired
}
