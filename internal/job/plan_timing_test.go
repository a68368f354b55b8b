package job

import "testing"

// BenchmarkPlan is what planning one run costs the worker: from the spec
// (every ab line parsed again) and from the attempt's Planner.
func BenchmarkPlan(b *testing.B) {
	s := abSweep()
	pl := s.Planner()
	p := pl.Points()[0]
	b.Run("spec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Plan(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("planner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := pl.Plan(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
