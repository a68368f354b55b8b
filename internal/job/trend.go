package job

import (
	"fmt"
	"slices"
	"strings"
	"time"
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
	// Metric is a threshold metric (Metrics); "p99" and "mean" stand for
	// "p99_ms" and "mean_ms".
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

// CanonicalMetric returns the threshold metric name meant by name:
// name itself, or name + "_ms" for the latency short forms ("p99",
// "mean"); ok is false for a name that is neither.
func CanonicalMetric(name string) (string, bool) {
	if knownMetric(name) {
		return name, true
	}
	if knownMetric(name + "_ms") {
		return name + "_ms", true
	}
	return "", false
}

func (t Trend) withDefaults() Trend {
	if t.Window == 0 {
		t.Window = DefaultTrendWindow
	}
	if t.MinRuns == 0 {
		t.MinRuns = min(DefaultTrendMinRuns, t.Window)
	}
	if m, ok := CanonicalMetric(t.Metric); ok {
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
	return s.Trend.withDefaults().Window
}

func (v *validator) trend(s Spec) {
	t := s.Trend
	if t == nil {
		return
	}
	if _, ok := CanonicalMetric(t.Metric); !ok {
		v.add("trend.metric", "unknown metric %q: want one of %s", t.Metric, strings.Join(Metrics(), ", "))
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
	if w := t.withDefaults().Window; t.MinRuns < 0 || t.MinRuns > w {
		v.add("trend.min_runs", "want 1 to the window (%d)", w)
	}
	if len(t.Branch) > maxLabelVal || hasControl(t.Branch) {
		v.add("trend.branch", "a label value is at most %d printable characters", maxLabelVal)
	}
	if s.Labels[LabelTemplate] == "" {
		v.add("trend", "a trend compares with earlier jobs of the same template: the job needs the label %q (jobs created from a template carry it)", LabelTemplate)
	}
}

// History is the earlier jobs a trend is judged against, newest first.
type History []Baseline

// judgeTrend lists the cells of cells that break s's trend against
// history.
func judgeTrend(t Trend, cells []pointRuns, history History) []ThresholdFailure {
	t = t.withDefaults()
	raw := t.String()
	byJob := make([]*baselineCells, 0, min(len(history), t.Window))
	for i := range history[:min(len(history), t.Window)] {
		byJob = append(byJob, indexBaseline(&history[i]))
	}
	var out []ThresholdFailure
	for _, c := range cells {
		if len(c.reports) == 0 || (t.Target != "" && t.Target != c.point.Target) {
			continue
		}
		var past []float64
		var jobs []string
		for _, b := range byJob {
			if bc, ok := b.cells[keyOfCell(c.point)]; ok {
				if st := metricStat(bc.reports, t.Metric); st.N > 0 {
					past = append(past, st.Mean)
					jobs = append(jobs, b.jobID)
				}
			}
		}
		if len(past) < t.MinRuns {
			continue
		}
		st := metricStat(c.reports, t.Metric)
		f := failureAt(raw, c.point)
		f.TrendJobs = jobs
		if st.N == 0 {
			f.Reason = "no request completed, so there is no " + t.Metric
			out = append(out, f)
			continue
		}
		med := median(past)
		f.Value, f.Baseline = st.Mean, &med
		if reason, bound, failed := t.breaks(st.Mean, med, len(past)); failed {
			f.Bound, f.Reason = &bound, reason
			out = append(out, f)
		}
	}
	return out
}

// breaks says whether v breaks t against median med of n jobs, with the
// bound it broke and a sentence saying so.
func (t Trend) breaks(v, med float64, n int) (string, float64, bool) {
	of := ""
	if t.Branch != "" {
		of = " of " + t.Branch
	}
	pct := 0.0
	if med != 0 {
		pct = (v - med) / med * 100
	}
	if p := t.MaxIncreasePct; p != nil {
		if bound := med * (1 + *p/100); v > bound {
			return fmt.Sprintf("%s %s is %.1f %% above %s, the median of the last %d finished runs%s (limit %s %%)",
				t.Metric, formatNumber(round3(v)), pct, formatNumber(round3(med)), n, of, formatNumber(*p)), bound, true
		}
	}
	if p := t.MaxDecreasePct; p != nil {
		if bound := med * (1 - *p/100); v < bound {
			return fmt.Sprintf("%s %s is %.1f %% below %s, the median of the last %d finished runs%s (limit %s %%)",
				t.Metric, formatNumber(round3(v)), -pct, formatNumber(round3(med)), n, of, formatNumber(*p)), bound, true
		}
	}
	return "", 0, false
}

func round3(v float64) float64 {
	return float64(int64(v*1000+0.5)) / 1000
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// TrendPoint is one job's value of a metric in one cell.
type TrendPoint struct {
	JobID       string    `json:"job_id"`
	CreatedAt   time.Time `json:"created_at"`
	Target      string    `json:"target"`
	Concurrency int       `json:"concurrency"`
	Requests    int       `json:"requests,omitempty"`
	Duration    Duration  `json:"duration,omitempty"`
	Rate        float64   `json:"rate,omitempty"`
	// Value is the mean of the metric over the cell's repeats; Stat has
	// its spread.
	Value   float64 `json:"value"`
	Stat    Stat    `json:"stat"`
	Verdict string  `json:"verdict,omitempty"`
	Commit  string  `json:"commit,omitempty"`
	Branch  string  `json:"branch,omitempty"`
}

// TrendSeries is metric's value in every cell of jobs (oldest first, as a
// chart reads) whose target is target (its name, or its URL, or any when
// empty). Cells where the metric was not measured are left out.
func TrendSeries(metric, target string, jobs []TrendJob) []TrendPoint {
	var out []TrendPoint
	for _, tj := range jobs {
		for _, c := range groupRuns(tj.Spec.Points(), tj.Runs) {
			p := c.point
			if target != "" && p.Target != target && targetURL(tj.Spec, p) != target {
				continue
			}
			st := metricStat(c.reports, metric)
			if st.N == 0 {
				continue
			}
			out = append(out, TrendPoint{
				JobID: tj.JobID, CreatedAt: tj.CreatedAt, Target: p.Target, Concurrency: p.Concurrency,
				Requests: p.Requests, Duration: p.Duration, Rate: p.Rate, Value: st.Mean, Stat: st,
				Verdict: tj.Verdict, Commit: tj.Spec.Labels[LabelCommit], Branch: tj.Spec.Labels[LabelBranch],
			})
		}
	}
	slices.SortStableFunc(out, func(a, b TrendPoint) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out
}

// TrendJob is one finished job of a trend series.
type TrendJob struct {
	Baseline
	CreatedAt time.Time
	Verdict   string
}

// targetURL is the URL of p's target, "" for a target of several URLs.
func targetURL(s Spec, p Point) string {
	if p.TargetIndex < 0 || p.TargetIndex >= len(s.Targets) {
		return ""
	}
	return s.Targets[p.TargetIndex].URL
}
