package abreport

import (
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestTailPercentileMs(t *testing.T) {
	// 1..n µs, one request each: ab's rule puts p at the sample of index
	// floor(n·p/100), i.e. the value floor(n·p/100)+1 µs (exact below
	// 2048 µs, within the histogram's 0.1 % above).
	report := func(n int64) *Report {
		h := hdrhistogram.New(1, 3_600_000_000, 3)
		for v := int64(1); v <= n; v++ {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		r := &Report{CompleteRequests: n, LatencyHistogram: encodeHistogram(h)}
		r.ConnectionTimesMs.Total.Min, r.ConnectionTimesMs.Total.Max = 0.001, float64(n)/1000
		return r
	}
	tests := []struct {
		name    string
		r       *Report
		percent string
		wantMs  float64
		wantOK  bool
		wantErr bool
	}{
		{"p99.9 of 1000", report(1000), "99.9", 1.0, true, false},   // index 999: the slowest
		{"p99.9 of 2000", report(2000), "99.9", 1.999, true, false}, // index 1998
		{"p99.99 of 1000", report(1000), "99.99", 1.0, true, false},
		{"p99.99 of 100", report(100), "99.99", 0.1, true, false},
		{"not a tail percent", report(100), "99.5", 0, false, false},
		{"nothing completed", &Report{}, "99.9", 0, false, false},
		{"no histogram", &Report{CompleteRequests: 5}, "99.9", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, ok, err := TailPercentileMs(tt.r, tt.percent)
			if ok != tt.wantOK || (err != nil) != tt.wantErr || ms != tt.wantMs {
				t.Errorf("TailPercentileMs = %v, %v, %v; want %v, %v, err %v", ms, ok, err, tt.wantMs, tt.wantOK, tt.wantErr)
			}
		})
	}
}
