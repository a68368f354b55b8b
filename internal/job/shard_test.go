package job

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/benchq/benchq/internal/measure"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		n, k int
		want []int
	}{
		{30000, 3, []int{10000, 10000, 10000}},
		{10, 3, []int{4, 3, 3}},
		{11, 3, []int{4, 4, 3}},
		{6, 3, []int{2, 2, 2}},
		{3, 3, []int{1, 1, 1}},
		{7, 1, []int{7}},
		{2, 4, []int{1, 1, 0, 0}},
	}
	for _, tt := range tests {
		got := Split(tt.n, tt.k)
		if !cmp.Equal(got, tt.want) {
			t.Errorf("Split(%d, %d) = %v, want %v", tt.n, tt.k, got, tt.want)
		}
		sum := 0
		for _, p := range got {
			sum += p
		}
		if sum != tt.n {
			t.Errorf("Split(%d, %d) sums to %d", tt.n, tt.k, sum)
		}
	}
}

func TestShardPlan(t *testing.T) {
	base := measure.Plan{URLs: []string{"http://127.0.0.1:1/"}, Concurrency: 7, Requests: 1000, Duration: 3 * time.Second}
	open := measure.Plan{URLs: []string{"http://127.0.0.1:1/"}, Concurrency: 10, Requests: 100, Rate: 50}
	frac := measure.Plan{URLs: []string{"http://127.0.0.1:1/"}, Concurrency: 4, Duration: time.Second, Rate: 2.5}
	type part struct {
		c, n int
		rate float64
		d    time.Duration
	}
	tests := []struct {
		name string
		plan measure.Plan
		k    int
		want []part
	}{
		{"closed", base, 3, []part{{3, 334, 0, 3 * time.Second}, {2, 333, 0, 3 * time.Second}, {2, 333, 0, 3 * time.Second}}},
		{"one shard is the plan", base, 1, []part{{7, 1000, 0, 3 * time.Second}}},
		{"whole rate spread", open, 3, []part{{4, 34, 17, 0}, {3, 33, 17, 0}, {3, 33, 16, 0}}},
		{"fractional rate in equal parts", frac, 2, []part{{2, 0, 1.25, time.Second}, {2, 0, 1.25, time.Second}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []part
			var rate float64
			for i := range tt.k {
				p := ShardPlan(tt.plan, i, tt.k)
				got = append(got, part{p.Concurrency, p.Requests, p.Rate, p.Duration})
				rate += p.Rate
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(part{})); diff != "" {
				t.Errorf("parts mismatch (-want +got):\n%s", diff)
			}
			if rate != tt.plan.Rate {
				t.Errorf("rates sum to %v, want %v", rate, tt.plan.Rate)
			}
		})
	}
}
