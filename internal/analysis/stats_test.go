package analysis

import (
	"math"
	"testing"

	"github.com/benchq/benchq/internal/job"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestNewStat(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want job.Stat
	}{
		{"empty", nil, job.Stat{}},
		{"one repeat", []float64{42}, job.Stat{N: 1, Mean: 42, Min: 42, Max: 42}},
		// sd = sqrt(((-10)² + 0² + 10²) / 2) = 10; cv = 10/110.
		{"three repeats", []float64{100, 110, 120}, job.Stat{N: 3, Mean: 110, SD: 10, Min: 100, Max: 120, CV: 10.0 / 110}},
		{"unordered", []float64{120, 100, 110}, job.Stat{N: 3, Mean: 110, SD: 10, Min: 100, Max: 120, CV: 10.0 / 110}},
		// 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum to 32, sd = sqrt(32/7).
		{"eight", []float64{2, 4, 4, 4, 5, 5, 7, 9}, job.Stat{N: 8, Mean: 5, SD: math.Sqrt(32.0 / 7), Min: 2, Max: 9, CV: math.Sqrt(32.0/7) / 5}},
		{"zero mean", []float64{0, 0}, job.Stat{N: 2}},
	}
	for _, tt := range tests {
		got := newStat(tt.in)
		if got.N != tt.want.N || !near(got.Mean, tt.want.Mean) || !near(got.SD, tt.want.SD) ||
			got.Min != tt.want.Min || got.Max != tt.want.Max || !near(got.CV, tt.want.CV) {
			t.Errorf("%s: newStat(%v) = %+v, want %+v", tt.name, tt.in, got, tt.want)
		}
	}
	if cv := newStat([]float64{100, 110, 120}).CV; math.Abs(cv-0.0909) > 0.00005 {
		t.Errorf("newStat(100, 110, 120).CV = %.5f, want 0.0909", cv)
	}
}
