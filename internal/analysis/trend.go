package analysis

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// History is the earlier jobs a trend is judged against, newest first.
type History []Baseline

// judgeTrend lists the cells of cells that break s's trend against
// history.
func judgeTrend(t job.Trend, cells []pointRuns, history History) []job.ThresholdFailure {
	t = t.WithDefaults()
	raw := t.String()
	byJob := make([]*baselineCells, 0, min(len(history), t.Window))
	for i := range history[:min(len(history), t.Window)] {
		byJob = append(byJob, indexBaseline(&history[i]))
	}
	var out []job.ThresholdFailure
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
		if reason, bound, failed := breaks(t, st.Mean, med, len(past)); failed {
			f.Bound, f.Reason = &bound, reason
			out = append(out, f)
		}
	}
	return out
}

// breaks says whether v breaks t against median med of n jobs, with the
// bound it broke and a sentence saying so.
func breaks(t job.Trend, v, med float64, n int) (string, float64, bool) {
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
	JobID       string       `json:"job_id"`
	CreatedAt   time.Time    `json:"created_at"`
	Target      string       `json:"target"`
	Concurrency int          `json:"concurrency"`
	Requests    int          `json:"requests,omitempty"`
	Duration    job.Duration `json:"duration,omitempty"`
	Rate        float64      `json:"rate,omitempty"`
	// Value is the mean of the metric over the cell's repeats; Stat has
	// its spread.
	Value   float64  `json:"value"`
	Stat    job.Stat `json:"stat"`
	Verdict string   `json:"verdict,omitempty"`
	Commit  string   `json:"commit,omitempty"`
	Branch  string   `json:"branch,omitempty"`
	// Testbed is the ID of the testbed the cell's runs were measured on
	// (job.Testbed.ID), "mixed" when they differ, empty for runs stored
	// before testbeds were recorded.
	Testbed string `json:"testbed,omitempty" example:"4f1c2a9b0d3e"`
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
				Verdict: tj.Verdict, Commit: tj.Spec.Labels[job.LabelCommit], Branch: tj.Spec.Labels[job.LabelBranch],
				Testbed: c.testbed,
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
func targetURL(s job.Spec, p job.Point) string {
	if p.TargetIndex < 0 || p.TargetIndex >= len(s.Targets) {
		return ""
	}
	return s.Targets[p.TargetIndex].URL
}

// formatNumber writes v in the fewest digits that read back as v, as
// job.Threshold.String does.
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
