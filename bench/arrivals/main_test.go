package main

import (
	"slices"
	"testing"
)

func TestSendErrors(t *testing.T) {
	tests := []struct {
		name string
		at   []int64 // ns
		rate float64
		want []float64 // µs, sorted
	}{
		{"on time, constant delay", []int64{5000, 1_005_000, 2_005_000}, 1000, []float64{0, 0, 0}},
		{"one late", []int64{0, 1_000_000, 2_300_000, 3_000_000}, 1000, []float64{0, 0, 0, 300}},
		{"one early: the others count from it", []int64{0, 800_000, 2_000_000}, 1000, []float64{0, 200, 200}},
		{"out of order", []int64{2_000_000, 0, 1_000_000}, 1000, []float64{0, 0, 0}},
		{"a slow rate drifts", []int64{0, 1_100_000, 2_200_000}, 1000, []float64{0, 100, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sendErrors(slices.Clone(tt.at), tt.rate); !slices.Equal(got, tt.want) {
				t.Errorf("sendErrors(%v, %v) = %v, want %v", tt.at, tt.rate, got, tt.want)
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct{ q, want float64 }{{0.5, 5}, {0.99, 10}, {0, 1}, {1, 10}} {
		if got := quantile(v, c.q); got != c.want {
			t.Errorf("quantile(1..10, %v) = %v, want %v", c.q, got, c.want)
		}
	}
}
