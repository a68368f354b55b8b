package measure

import (
	"testing"
	"time"
)

// TestMergeSpansShards: shards measured in parallel make one run from the
// first start to the last end, whatever order they merge in; without
// starts the longer elapsed time is all there is.
func TestMergeSpansShards(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	a := Measurement{Started: t0, Elapsed: 100 * time.Millisecond}
	b := Measurement{Started: t0.Add(5 * time.Millisecond), Elapsed: 100 * time.Millisecond}
	c := Measurement{Started: t0.Add(time.Millisecond), Elapsed: 50 * time.Millisecond}
	tests := []struct {
		name    string
		parts   []Measurement
		started time.Time
		elapsed time.Duration
	}{
		{"in start order", []Measurement{a, b, c}, t0, 105 * time.Millisecond},
		{"late shard first", []Measurement{b, c, a}, t0, 105 * time.Millisecond},
		{"one", []Measurement{c}, c.Started, 50 * time.Millisecond},
		{"no starts", []Measurement{{Elapsed: time.Second}, {Elapsed: 2 * time.Second}}, time.Time{}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Measurement
			for i := range tt.parts {
				m.Merge(&tt.parts[i])
			}
			if !m.Started.Equal(tt.started) || m.Elapsed != tt.elapsed {
				t.Errorf("merged = started %s, elapsed %s; want %s, %s", m.Started, m.Elapsed, tt.started, tt.elapsed)
			}
		})
	}
}
