package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
)

func pct(v float64) *float64 { return &v }

// trendHistory is one earlier job per rps value, newest first, each with
// target a at c = 1 (p99 = 2000/rps ms).
func trendHistory(t *testing.T, rps ...float64) History {
	t.Helper()
	var h History
	for i, v := range rps {
		s := jobtest.SweepSpec([]int{1}, "a")
		h = append(h, Baseline{JobID: fmt.Sprintf("h%d", i), Spec: s, Runs: runsFor(t, s, "a", 1, abRun(1, v))})
	}
	return h
}

func TestTrendVerdict(t *testing.T) {
	ten := []float64{100, 101, 99, 100, 102, 98, 100, 100, 101, 99} // p99 median 20 ms
	tests := []struct {
		name    string
		trend   job.Trend
		history History
		rps     float64 // the job's; p99 = 2000/rps
		want    string
		reason  string // a part of the failure's reason
	}{
		{"20 % slower fails", job.Trend{Metric: "p99", MaxIncreasePct: pct(10)}, trendHistory(t, ten...), 100 / 1.2, job.VerdictFail, "above 20, the median of the last 10 finished runs"},
		{"5 % slower passes", job.Trend{Metric: "p99_ms", MaxIncreasePct: pct(10)}, trendHistory(t, ten...), 100 / 1.05, job.VerdictPass, ""},
		{"faster passes an increase limit", job.Trend{Metric: "p99", MaxIncreasePct: pct(10)}, trendHistory(t, ten...), 200, job.VerdictPass, ""},
		{"rps drop fails a decrease limit", job.Trend{Metric: "rps", MaxDecreasePct: pct(10)}, trendHistory(t, ten...), 80, job.VerdictFail, "20.0 % below 100"},
		{"window takes the newest", job.Trend{Metric: "rps", MaxDecreasePct: pct(10), Window: 3}, trendHistory(t, 80, 80, 80, 100, 100, 100, 100), 80, job.VerdictPass, ""},
		{"too little history is not judged", job.Trend{Metric: "p99", MaxIncreasePct: pct(10)}, trendHistory(t, 100, 100), 50, job.VerdictPass, ""},
		{"min_runs lowered judges it", job.Trend{Metric: "p99", MaxIncreasePct: pct(10), MinRuns: 2}, trendHistory(t, 100, 100), 50, job.VerdictFail, "last 2 finished runs"},
		{"other target not judged", job.Trend{Metric: "p99", MaxIncreasePct: pct(10), Target: "b"}, trendHistory(t, ten...), 50, job.VerdictPass, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jobtest.SweepSpec([]int{1}, "a", "b")
			s.Trend = &tt.trend
			runs := runsFor(t, s, "a", 1, abRun(1, tt.rps))
			runs = append(runs, runsFor(t, s, "b", 1, abRun(1, 100))...)
			got := AnalyzeWithHistory(s, runs, nil, tt.history).Verdict
			if got.Result != tt.want {
				t.Fatalf("verdict = %+v, want %s", got, tt.want)
			}
			if tt.want != job.VerdictFail {
				return
			}
			f := got.Failures[0]
			if !strings.HasPrefix(f.Threshold, "trend: ") || !strings.Contains(f.Reason, tt.reason) || f.Baseline == nil || f.Bound == nil || len(f.TrendJobs) == 0 {
				t.Errorf("failure = %+v, want the trend named, reason with %q, median, bound and jobs", f, tt.reason)
			}
		})
	}
}

func TestTrendNoneWithoutHistoryOrThresholds(t *testing.T) {
	s := jobtest.SweepSpec([]int{1}, "a")
	s.Trend = &job.Trend{Metric: "p99", MaxIncreasePct: pct(10)}
	if got := AnalyzeWithHistory(s, runsFor(t, s, "a", 1, abRun(1, 100)), nil, nil).Verdict; got.Result != job.VerdictPass {
		t.Errorf("verdict without history = %+v, want pass (a trend is a check, so not none)", got)
	}
}

func TestTrendSeries(t *testing.T) {
	var jobs []TrendJob
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, rps := range []float64{100, 200, 400} {
		s := jobtest.SweepSpec([]int{1}, "a", "b")
		s.Labels = map[string]string{job.LabelCommit: fmt.Sprintf("c%d", i)}
		runs := append(runsFor(t, s, "a", 1, abRun(1, rps)), runsFor(t, s, "b", 1, abRun(1, 1))...)
		// newest first, as History lists them
		jobs = append([]TrendJob{{Baseline: Baseline{JobID: fmt.Sprintf("j%d", i), Spec: s, Runs: runs}, CreatedAt: t0.Add(time.Duration(i) * time.Hour)}}, jobs...)
	}
	tests := []struct {
		target string
		want   []float64
	}{
		{"a", []float64{100, 200, 400}},
		{"http://127.0.0.1:18080/", []float64{100, 200, 400}},
		{"", []float64{100, 1, 200, 1, 400, 1}},
		{"c", nil},
	}
	for _, tt := range tests {
		got := TrendSeries("rps", tt.target, jobs)
		var vals []float64
		for _, p := range got {
			vals = append(vals, p.Value)
		}
		if fmt.Sprint(vals) != fmt.Sprint(tt.want) {
			t.Errorf("TrendSeries(rps, %q) values = %v, want %v (oldest first)", tt.target, vals, tt.want)
		}
		if len(got) > 0 && got[0].Commit != "c0" {
			t.Errorf("first point's commit = %q, want c0", got[0].Commit)
		}
	}
}
