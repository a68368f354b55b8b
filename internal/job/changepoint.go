package job

import (
	"math"
	"strings"
	"time"
)

// Change point defaults: a shift must be this unlikely under no change
// (the t-test's p-value) and this large (relative to the mean before it)
// to be reported. They follow Hunter's defaults for CI benchmark history.
const (
	DefaultChangeMaxPValue    = 0.001
	DefaultChangeMinMagnitude = 0.05
)

// ChangePointOptions tune the change points found over the history of the
// job's template (see ChangePoint). In the spec, so that a template carries
// them into every job it creates, as it carries its trend.
type ChangePointOptions struct {
	// MaxPValue is the largest p-value of a reported shift (default
	// 0.001): smaller reports fewer, surer ones.
	MaxPValue *float64 `json:"max_pvalue,omitempty" example:"0.001"`
	// MinMagnitude is the smallest relative change of the mean reported
	// (default 0.05, 5 %).
	MinMagnitude *float64 `json:"min_magnitude,omitempty" example:"0.05"`
}

// Values are o's settings with the defaults filled in; a nil o has the
// defaults.
func (o *ChangePointOptions) Values() (maxPValue, minMagnitude float64) {
	maxPValue, minMagnitude = DefaultChangeMaxPValue, DefaultChangeMinMagnitude
	if o != nil && o.MaxPValue != nil {
		maxPValue = *o.MaxPValue
	}
	if o != nil && o.MinMagnitude != nil {
		minMagnitude = *o.MinMagnitude
	}
	return maxPValue, minMagnitude
}

// ValidMaxPValue and ValidMinMagnitude say whether a setting can be used;
// the spec's validation and the trends API's query share them.
func ValidMaxPValue(p float64) bool    { return p > 0 && p <= 1 && !math.IsNaN(p) }
func ValidMinMagnitude(m float64) bool { return m >= 0 && m <= 100 && !math.IsNaN(m) }
func (v *validator) changePoints(s Spec) {
	o := s.ChangePoints
	if o == nil {
		return
	}
	if o.MaxPValue != nil && !ValidMaxPValue(*o.MaxPValue) {
		v.add("change_points.max_pvalue", "want a p-value above 0 and at most 1, such as 0.001")
	}
	if o.MinMagnitude != nil && !ValidMinMagnitude(*o.MinMagnitude) {
		v.add("change_points.min_magnitude", "want a relative change from 0 to 100, such as 0.05 for 5 %%")
	}
}

// ChangePoint is a shift in one series of a template's history: the value
// of one metric in one cell (target, concurrency, requests, duration or
// rate) of the template's succeeded jobs (of one branch, when the jobs
// carry one), measured on one testbed, oldest first. JobID is the first
// job after the shift.
type ChangePoint struct {
	// ID names the change point in the acknowledge endpoint.
	ID string `json:"id" example:"cp_3kq9x2m4t7v1"`
	// Series names the series the point is in: template, branch, cell,
	// metric and testbed.
	Series      string   `json:"series" example:"checkout@main shop c=2 n=40 p99_ms testbed=4f1c2a9b0d3e"`
	Template    string   `json:"template" example:"checkout"`
	Branch      string   `json:"branch,omitempty" example:"main"`
	Target      string   `json:"target" example:"shop"`
	Concurrency int      `json:"concurrency" example:"2"`
	Requests    int      `json:"requests,omitempty"`
	Duration    Duration `json:"duration,omitempty"`
	Rate        float64  `json:"rate,omitempty"`
	Metric      string   `json:"metric" example:"p99_ms"`
	// Testbed is the testbed ID of the series (Testbed.ID), "any" when the
	// series was asked for across testbeds.
	Testbed string `json:"testbed,omitempty" example:"4f1c2a9b0d3e"`
	// JobID is the first job after the shift, Commit its commit label.
	JobID  string `json:"job_id" example:"j_2x7k"`
	Commit string `json:"commit,omitempty" example:"9fceb02"`
	// Before and After are the series' means before and after the shift;
	// Magnitude is (After-Before)/|Before|.
	Before    float64 `json:"before" example:"20.4"`
	After     float64 `json:"after" example:"24.6"`
	Magnitude float64 `json:"magnitude" example:"0.206"`
	PValue    float64 `json:"p_value" example:"0.00002"`
	// DetectedAt is when the shift was first found.
	DetectedAt time.Time `json:"detected_at"`
	// Acknowledged marks a shift someone said was expected, with who
	// (their API key id) and when.
	Acknowledged   bool       `json:"acknowledged"`
	AcknowledgedBy string     `json:"acknowledged_by,omitempty" example:"key_8s2k"`
	AcknowledgedAt *time.Time `json:"acknowledged_at,omitempty"`
	// Near lists the jobs within two places of JobID in the series: a
	// later detection of the same shift over more history may name one
	// of them, and is the same change point. Not kept.
	Near []string `json:"-"`
}

// changePointPrefix starts every change point ID.
const changePointPrefix = "cp_"

// NewChangePointID returns a new change point ID: "cp_" and a job-style
// ID, so IDs sort by creation.
func NewChangePointID() string { return changePointPrefix + NewID() }

// ValidChangePointID reports whether s has the form NewChangePointID
// produces.
func ValidChangePointID(s string) bool {
	id, ok := strings.CutPrefix(s, changePointPrefix)
	return ok && ValidID(id)
}
