package job

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// abSweep is a job of two ab targets with headers and a body, swept over
// three concurrencies with a warm-up.
func abSweep() Spec {
	return Spec{
		Targets: []Target{
			{Name: "a", AB: `-k -H "X-A: 1" -H "X-A: 2" -H "Accept: text/plain" -T application/json http://127.0.0.1:8081/a`},
			{Name: "b", AB: `-H "X-B: 1" -t 2 http://127.0.0.1:8082/b`},
		},
		Request: Request{Body: `{"k":1}`},
		Sweep:   Sweep{Concurrency: []int{1, 2, 4}, Requests: []int{50}, Repeats: 2, WarmupRequests: 10},
	}
}

// TestPlannerPlansEveryPointOnce: a Planner's plans, warm-ups, points,
// schedule and estimates are Spec's, and each plan is the caller's own:
// changing one changes no later plan.
func TestPlannerPlansEveryPointOnce(t *testing.T) {
	s := abSweep()
	pl := s.Planner()
	if diff := cmp.Diff(s.Points(), pl.Points()); diff != "" {
		t.Fatalf("Planner.Points() differs from Spec.Points() (-spec +planner):\n%s", diff)
	}
	if diff := cmp.Diff(s.Schedule(), pl.Schedule()); diff != "" {
		t.Errorf("Planner.Schedule() differs (-spec +planner):\n%s", diff)
	}
	if s.Estimate() != pl.Estimate() {
		t.Errorf("Planner.Estimate() = %v, want Spec's %v", pl.Estimate(), s.Estimate())
	}
	for _, p := range pl.Points() {
		want, err := s.Plan(p)
		if err != nil {
			t.Fatalf("Spec.Plan(%d) = %v", p.Index, err)
		}
		got, err := pl.Plan(p)
		if err != nil || !cmp.Equal(want, got, cmpopts.IgnoreFields(want, "Guard", "Progress")) {
			t.Fatalf("Planner.Plan(%d) = %+v, %v; want %+v", p.Index, got, err, want)
		}
		// A caller that changes its plan leaves the Planner's alone.
		got.URLs[0], got.Headers[0].Value, got.Body[0] = "http://127.0.0.1:1/", "changed", '!'
		again, _ := pl.Plan(p)
		if !cmp.Equal(want, again, cmpopts.IgnoreFields(want, "Guard", "Progress")) {
			t.Fatalf("Planner.Plan(%d) after a caller changed its plan = %+v, want %+v", p.Index, again, want)
		}
		ww, _, _ := s.WarmupPlan(p)
		gw, ok, err := pl.WarmupPlan(p)
		if !ok || err != nil || !cmp.Equal(ww, gw, cmpopts.IgnoreFields(ww, "Guard", "Progress")) {
			t.Errorf("Planner.WarmupPlan(%d) = %+v, %v, %v; want %+v", p.Index, gw, ok, err, ww)
		}
		if s.RunEstimate(p) != pl.RunEstimate(p) {
			t.Errorf("Planner.RunEstimate(%d) = %v, want %v", p.Index, pl.RunEstimate(p), s.RunEstimate(p))
		}
	}
	if diff := cmp.Diff(s.TargetURLs(), pl.TargetURLs()); diff != "" {
		t.Errorf("Planner.TargetURLs() differs (-spec +planner):\n%s", diff)
	}
}

// TestPlannerParsesNoLine: planning a run from a Planner parses no ab
// line again; it only copies the target's plan (its URLs, headers and
// body). Allocations are counted, not time.
func TestPlannerParsesNoLine(t *testing.T) {
	s := abSweep()
	pl := s.Planner()
	p := pl.Points()[0]
	fromSpec := testing.AllocsPerRun(20, func() { _, _ = s.Plan(p) })
	fromPlanner := testing.AllocsPerRun(20, func() { _, _ = pl.Plan(p) })
	t.Logf("allocations per plan: Spec.Plan %.0f, Planner.Plan %.0f", fromSpec, fromPlanner)
	if fromPlanner > 3 {
		t.Errorf("Planner.Plan allocates %.0f times per plan, want at most 3 (the URLs, headers and body copied)", fromPlanner)
	}
}
