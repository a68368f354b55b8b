package analysis

import (
	"testing"

	"github.com/benchq/benchq/internal/jobtest"
)

// TestPointCountsUnsteadyRepeats: a point counts its unsteady repeats and
// keeps the first one's reason; a point without any has neither.
func TestPointCountsUnsteadyRepeats(t *testing.T) {
	s := jobtest.SweepSpec([]int{1, 2}, "t")
	s.Sweep.Repeats = 3
	runs := runsFor(t, s, "t", 1, abRun(1, 100), abRun(1, 100), abRun(1, 100))
	runs = append(runs, runsFor(t, s, "t", 2, abRun(2, 150), abRun(2, 150), abRun(2, 150))...)
	runs[1].Result.Unsteady, runs[1].Result.UnsteadyReason = true, "p50 rose first"
	runs[2].Result.Unsteady, runs[2].Result.UnsteadyReason = true, "throughput fell second"
	a := Analyze(s, runs)
	for _, p := range a.Points {
		want, reason := 0, ""
		if p.Point.Concurrency == 1 {
			want, reason = 2, "p50 rose first"
		}
		if p.Unsteady != want || p.UnsteadyReason != reason {
			t.Errorf("c = %d: Unsteady %d, %q; want %d, %q", p.Point.Concurrency, p.Unsteady, p.UnsteadyReason, want, reason)
		}
	}
}
