package job

import (
	"fmt"
	"strings"

	"github.com/benchq/benchq/internal/metric"
)

// LabelTemplate, LabelBranch and LabelCommit are the labels a job created
// from a template carries (the template's name; the branch and commit it
// ran for). Trends select a job's history by them.
const (
	LabelTemplate = "template"
	LabelBranch   = "branch"
	LabelCommit   = "commit"
)

// Trend is a threshold on the history of the job's template: the job's
// metric, per cell, against the median of the same cell over the last
// Window finished jobs created from the same template (and Branch, when
// given). "p99_ms more than 10 % above the median of the last 10 runs of
// main" is {"metric": "p99_ms", "max_increase_pct": 10, "window": 10,
// "branch": "main"}. It belongs in the job spec, next to the thresholds,
// so that a template carries it into every job it creates and each job
// says what it was held to.
type Trend struct {
	// Metric is a threshold metric (internal/metric's table); "p99" and
	// "mean" stand for "p99_ms" and "mean_ms".
	Metric string `json:"metric" example:"p99_ms"`
	// Target limits the trend to the target of this name; empty judges
	// every target.
	Target string `json:"target,omitempty"`
	// MaxIncreasePct fails a cell whose value is more than this many
	// percent above the median (for latencies); MaxDecreasePct one more
	// than this many percent below it (for rps). At least one is set.
	MaxIncreasePct *float64 `json:"max_increase_pct,omitempty" example:"10"`
	MaxDecreasePct *float64 `json:"max_decrease_pct,omitempty"`
	// Window is how many earlier finished jobs the median is over
	// (default 10, at most MaxTrendWindow).
	Window int `json:"window,omitempty" example:"10"`
	// MinRuns is how many of them a cell needs before it is judged
	// (default 3, at most Window): a young template's first jobs have no
	// history to be held to.
	MinRuns int `json:"min_runs,omitempty" example:"3"`
	// Branch, when set, takes the history from jobs labelled with this
	// branch only ("the last 10 runs of main").
	Branch string `json:"branch,omitempty" example:"main"`
}

// Trend defaults and limits.
const (
	DefaultTrendWindow  = 10
	DefaultTrendMinRuns = 3
	MaxTrendWindow      = 100
)

// WithDefaults fills Window and MinRuns left at 0 and spells Metric out
// ("p99" as "p99_ms"). A spec keeps its trend as submitted; the analysis
// judges the defaulted one.
func (t Trend) WithDefaults() Trend {
	if t.Window == 0 {
		t.Window = DefaultTrendWindow
	}
	if t.MinRuns == 0 {
		t.MinRuns = min(DefaultTrendMinRuns, t.Window)
	}
	if m, ok := metric.Canonical(t.Metric); ok {
		t.Metric = m
	}
	return t
}

// String names the trend in a verdict's failure.
func (t Trend) String() string {
	var parts []string
	if t.MaxIncreasePct != nil {
		parts = append(parts, fmt.Sprintf("more than %s %% above", formatNumber(*t.MaxIncreasePct)))
	}
	if t.MaxDecreasePct != nil {
		parts = append(parts, fmt.Sprintf("more than %s %% below", formatNumber(*t.MaxDecreasePct)))
	}
	s := fmt.Sprintf("trend: %s %s the median of the last %d runs", t.Metric, strings.Join(parts, " or "), t.Window)
	if t.Branch != "" {
		s += " of " + t.Branch
	}
	if t.Target != "" {
		s = t.Target + ": " + s
	}
	return s
}

// HistorySelector is the labels of the jobs whose runs make s's trend
// history: its template's, and its trend's branch. nil when s has no
// trend.
func (s Spec) HistorySelector() map[string]string {
	if s.Trend == nil {
		return nil
	}
	sel := map[string]string{LabelTemplate: s.Labels[LabelTemplate]}
	if s.Trend.Branch != "" {
		sel[LabelBranch] = s.Trend.Branch
	}
	return sel
}

// HistoryWindow is how many earlier jobs s's trend needs loaded.
func (s Spec) HistoryWindow() int {
	if s.Trend == nil {
		return 0
	}
	return s.Trend.WithDefaults().Window
}

func (v *validator) trend(s Spec) {
	t := s.Trend
	if t == nil {
		return
	}
	if _, ok := metric.Canonical(t.Metric); !ok {
		v.add("trend.metric", "unknown metric %q: want one of %s", t.Metric, strings.Join(metric.Names(), ", "))
	}
	if t.Target != "" && !s.hasTarget(t.Target) {
		v.add("trend.target", "%q names no target", t.Target)
	}
	if t.MaxIncreasePct == nil && t.MaxDecreasePct == nil {
		v.add("trend", "want max_increase_pct or max_decrease_pct")
	}
	for field, p := range map[string]*float64{"trend.max_increase_pct": t.MaxIncreasePct, "trend.max_decrease_pct": t.MaxDecreasePct} {
		if p != nil && (*p < 0 || *p > 1000) {
			v.add(field, "want a percentage from 0 to 1000")
		}
	}
	if t.Window < 0 || t.Window > MaxTrendWindow {
		v.add("trend.window", "want 1 to %d earlier jobs", MaxTrendWindow)
	}
	if w := t.WithDefaults().Window; t.MinRuns < 0 || t.MinRuns > w {
		v.add("trend.min_runs", "want 1 to the window (%d)", w)
	}
	if len(t.Branch) > maxLabelVal || hasControl(t.Branch) {
		v.add("trend.branch", "a label value is at most %d printable characters", maxLabelVal)
	}
	if s.Labels[LabelTemplate] == "" {
		v.add("trend", "a trend compares with earlier jobs of the same template: the job needs the label %q (jobs created from a template carry it)", LabelTemplate)
	}
}
