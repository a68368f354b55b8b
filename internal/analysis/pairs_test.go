package analysis

import (
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
)

// TestSeveralComparisons is seed 003's two questions in one job: does
// XCache raise Apache, and how does lighttpd compare with Apache under
// XCache. Each pair compares only its own two targets, the baseline
// shorthand's pairs come first, and a pair given twice is made once.
func TestSeveralComparisons(t *testing.T) {
	s := jobtest.SweepSpec([]int{8}, "apache", "apache-xcache", "lighttpd")
	s.Sweep.Repeats = 3
	s.Baseline = "apache"
	s.Comparisons = []job.ComparisonPair{{Target: "lighttpd", Baseline: "apache-xcache"}, {Target: "apache-xcache", Baseline: "apache"}}
	want := []job.ComparisonPair{{Target: "apache-xcache", Baseline: "apache"}, {Target: "lighttpd", Baseline: "apache"}, {Target: "lighttpd", Baseline: "apache-xcache"}}
	if got := s.ComparisonPairs(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("ComparisonPairs() = %v, want %v", got, want)
	}
	var runs []job.Run
	runs = append(runs, runsFor(t, s, "apache", 8, abRun(8, 100), abRun(8, 102), abRun(8, 98))...)
	runs = append(runs, runsFor(t, s, "apache-xcache", 8, abRun(8, 350), abRun(8, 345), abRun(8, 355))...)
	runs = append(runs, runsFor(t, s, "lighttpd", 8, abRun(8, 700), abRun(8, 690), abRun(8, 710))...)
	a := Analyze(s, runs)

	byTarget := map[string]job.PointSummary{}
	for _, p := range a.Points {
		byTarget[p.Point.Target] = p
	}
	if c := byTarget["apache"].Comparisons; len(c) != 0 {
		t.Errorf("apache has comparisons %+v, want none: it is nobody's target", c)
	}
	x := byTarget["apache-xcache"]
	if len(x.Comparisons) != 1 || x.Comparison == nil || x.Comparison.Baseline != "apache" || x.Comparison.RPS != "+250.00 %" {
		t.Errorf("apache-xcache comparisons %+v, comparison %+v; want one against apache, +250.00 %%", x.Comparisons, x.Comparison)
	}
	l := byTarget["lighttpd"]
	if len(l.Comparisons) != 2 || l.Comparisons[0].Baseline != "apache" || l.Comparisons[1].Baseline != "apache-xcache" {
		t.Fatalf("lighttpd comparisons %+v, want against apache then apache-xcache", l.Comparisons)
	}
	if c := l.ComparisonWith("apache-xcache"); c == nil || c.RPS != "+100.00 %" || !c.RPSSignificance.Significant ||
		!strings.HasPrefix(c.RPSSignificance.Text, "+100.00 % [") {
		t.Errorf("lighttpd vs apache-xcache = %+v, want +100.00 %% with its interval, significant", c)
	}
	if l.Comparison != &l.Comparisons[0] {
		t.Error("Comparison is not the comparison with the baseline")
	}
}
