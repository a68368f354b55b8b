package analysis

import (
	"strconv"
	"testing"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
)

func TestPercentChangeSeedNumbers(t *testing.T) {
	tests := []struct {
		base, x float64
		want    string
	}{
		{540.14, 608.71, "+12.69 %"}, // seed 000/002: lighttpd against apache
		{100, 96.9, "-3.10 %"},
		{100, 100, "+0.00 %"},
		{100, 99.999, "+0.00 %"}, // never "-0.00 %"
		{200, 100, "-50.00 %"},
		{1, 3, "+200.00 %"},
	}
	for _, tt := range tests {
		_, got := PercentChange(job.Stat{N: 1, Mean: tt.base}, job.Stat{N: 1, Mean: tt.x})
		if got != tt.want {
			t.Errorf("PercentChange(%v -> %v) = %q, want %q", tt.base, tt.x, got, tt.want)
		}
	}
	if pct, s := PercentChange(job.Stat{N: 1, Mean: 540.14}, job.Stat{N: 1, Mean: 608.71}); !near(pct, (608.71-540.14)/540.14*100) || s != "+12.69 %" {
		t.Errorf("PercentChange(540.14 -> 608.71) = %v, %q; want 12.6949…, +12.69 %%", pct, s)
	}
	for _, tt := range []struct{ base, x job.Stat }{
		{job.Stat{N: 1, Mean: 0}, job.Stat{N: 1, Mean: 10}},
		{job.Stat{}, job.Stat{N: 1, Mean: 10}},
		{job.Stat{N: 1, Mean: 10}, job.Stat{}},
	} {
		if pct, s := PercentChange(tt.base, tt.x); pct != 0 || s != "n/a" {
			t.Errorf("PercentChange(%+v -> %+v) = %v, %q; want 0, n/a", tt.base, tt.x, pct, s)
		}
	}
}

func TestAnalyzeBaselineComparison(t *testing.T) {
	s := jobtest.SweepSpec([]int{5, 50}, "apache", "lighttpd", "nginx")
	s.Baseline = "apache"
	var runs []job.Run
	runs = append(runs, series(t, s, "apache", 540.14, 1000)...)
	runs = append(runs, series(t, s, "lighttpd", 608.71, 969)...)
	runs = append(runs, runsFor(t, s, "nginx", 5, abRun(5, 0))...) // nothing completed; c = 50 not run
	a := Analyze(s, runs)
	byCell := map[string]*job.Comparison{}
	for _, p := range a.Points {
		byCell[p.Point.Target+"@"+strconv.Itoa(p.Point.Concurrency)] = p.Comparison
	}
	if byCell["apache@5"] != nil || byCell["apache@50"] != nil || byCell["nginx@50"] != nil {
		t.Errorf("comparisons on the baseline or an unrun point: %+v", byCell)
	}
	tests := []struct {
		cell          string
		rps, p50, p99 string
	}{
		// abRun's latencies are c/rps scaled, so they move opposite to rps.
		{"lighttpd@5", "+12.69 %", "-11.26 %", "-11.26 %"},
		{"lighttpd@50", "-3.10 %", "+3.20 %", "+3.20 %"},
		{"nginx@5", "-100.00 %", "n/a", "n/a"},
	}
	for _, tt := range tests {
		c := byCell[tt.cell]
		if c == nil || c.Baseline != "apache" || c.RPS != tt.rps || c.P50 != tt.p50 || c.P99 != tt.p99 {
			t.Errorf("comparison of %s = %+v, want baseline apache, rps %s, p50 %s, p99 %s", tt.cell, c, tt.rps, tt.p50, tt.p99)
		}
	}
}
