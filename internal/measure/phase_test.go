package measure

import (
	"math"
	"testing"
	"time"
)

func phaseOf(vals ...int64) Phase {
	ph := NewPhase()
	for _, v := range vals {
		ph.Record(v)
	}
	return ph
}

func TestPhaseStats(t *testing.T) {
	ph := phaseOf(2000, 3000, 5000, 8000, 11000)
	if ph.Count != 5 || ph.Min != 2000 || ph.Max != 11000 || ph.Sum != 29000 {
		t.Errorf("phase = %+v, want count 5, min 2000, max 11000, sum 29000", ph)
	}
	if got := ph.Mean(); got != 5800 {
		t.Errorf("Mean() = %v, want 5800", got)
	}
	// sample sd of 2,3,5,8,11 (ms) is 3.7014...
	if got := ph.StdDev(); math.Abs(got-3701.35) > 0.01 {
		t.Errorf("StdDev() = %v, want 3701.35", got)
	}
	for _, tt := range []struct {
		q    float64
		want int64
	}{{0, 2000}, {0.5, 5000}, {0.8, 8000}, {1, 11000}, {2, 11000}} {
		if got := ph.Quantile(tt.q); got < tt.want*999/1000 || got > tt.want*1001/1000 {
			t.Errorf("Quantile(%v) = %d, want %d (±0.1%%)", tt.q, got, tt.want)
		}
	}
	var empty Phase
	if empty.Mean() != 0 || empty.StdDev() != 0 || empty.Quantile(0.5) != 0 {
		t.Errorf("empty phase Mean, StdDev, Quantile = %v, %v, %v, want zeros", empty.Mean(), empty.StdDev(), empty.Quantile(0.5))
	}
	if one := phaseOf(7); one.StdDev() != 0 {
		t.Errorf("StdDev() of one value = %v, want 0", one.StdDev())
	}
}

func TestPhaseRecordClamps(t *testing.T) {
	ph := phaseOf(-5, 2*histHighest)
	if ph.Min != 0 || ph.Max != 2*histHighest || ph.Hist.TotalCount() != 2 {
		t.Errorf("phase = min %d max %d hist %d, want 0, %d exact, both in Hist", ph.Min, ph.Max, ph.Hist.TotalCount(), 2*histHighest)
	}
}

func TestPhaseMergeIsExact(t *testing.T) {
	a, b := phaseOf(1, 2, 3), phaseOf(10, 20)
	all := phaseOf(1, 2, 3, 10, 20)
	a.Merge(&b)
	if a.Count != all.Count || a.Sum != all.Sum || a.SumSq != all.SumSq || a.Min != 1 || a.Max != 20 {
		t.Errorf("merged = %+v, want %+v", a, all)
	}
	if a.Hist.TotalCount() != 5 || a.Quantile(0.5) != all.Quantile(0.5) {
		t.Errorf("merged hist count %d p50 %d, want 5 and %d", a.Hist.TotalCount(), a.Quantile(0.5), all.Quantile(0.5))
	}
	var empty Phase
	empty.Merge(&b)
	if empty.Min != 10 || empty.Hist == nil || empty.Hist.TotalCount() != 2 {
		t.Errorf("merge into empty = %+v, want a copy of b", empty)
	}
	empty.Merge(&Phase{})
	if empty.Count != 2 || empty.Min != 10 {
		t.Errorf("merging an empty phase changed %+v", empty)
	}
}

func TestMeasurementMerge(t *testing.T) {
	t0 := time.Now()
	a := &Measurement{Complete: 3, Failed: 1, Failures: Failures{Connect: 1}, Concurrency: 2, Started: t0.Add(time.Second),
		Elapsed: time.Second, StatusCodes: map[int]int64{200: 3}, Total: phaseOf(1, 2, 3), DocumentPath: "/a"}
	b := &Measurement{Complete: 2, Failed: 1, Failures: Failures{Timeout: 1}, Concurrency: 3, Started: t0,
		Elapsed: 2 * time.Second, StatusCodes: map[int]int64{200: 1, 404: 1}, Total: phaseOf(10, 20),
		Open: &OpenModel{RequestedRate: 10, AchievedRate: 9, LateStarts: 1}, DocumentPath: "/b"}
	a.Merge(b)
	if a.Complete != 5 || a.Failed != 2 || a.Failures != (Failures{Connect: 1, Timeout: 1}) || a.Concurrency != 5 {
		t.Errorf("merged counters = %d complete, %d failed %+v, c %d, want 5, 2, connect+timeout, 5", a.Complete, a.Failed, a.Failures, a.Concurrency)
	}
	if !a.Started.Equal(t0) || a.Elapsed != 2*time.Second || a.DocumentPath != "/a" {
		t.Errorf("merged Started %v Elapsed %v path %q, want the earlier, the longer, m's", a.Started, a.Elapsed, a.DocumentPath)
	}
	if a.StatusCodes[200] != 4 || a.StatusCodes[404] != 1 || a.Total.Count != 5 || a.Total.Max != 20 {
		t.Errorf("merged codes %v total %+v, want 200:4 404:1 and 5 values", a.StatusCodes, a.Total)
	}
	if a.Open == nil || a.Open.RequestedRate != 10 || a.Open.LateStarts != 1 {
		t.Errorf("merged Open = %+v, want b's", a.Open)
	}
}
