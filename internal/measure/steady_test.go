package measure

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// syntheticRun is a run of len(levels) one-second intervals; interval i
// completes rps[i] requests whose latencies spread ±10 % around p50[i] µs,
// every interval's level shaken by noise (relative, normal) on top.
func syntheticRun(seed uint64, rps, p50 []float64, noise float64) *Measurement {
	rng := rand.New(rand.NewPCG(seed, 1))
	start := time.Unix(1_700_000_000, 0)
	tl := &Timeline{Start: start, Interval: time.Second}
	for i := range rps {
		n := int64(rps[i] * math.Exp(noise*rng.NormFloat64()))
		level := p50[i] * math.Exp(noise*rng.NormFloat64())
		h := NewIntervalHistogram()
		iv := Interval{Requests: n, Succeeded: n}
		for range n {
			v := int64(level * (0.9 + 0.2*rng.Float64()))
			_ = h.RecordValue(v)
			iv.Latency.Max = max(iv.Latency.Max, v)
		}
		iv.Latency.Count = n
		iv.Latency.Set(h)
		tl.Intervals = append(tl.Intervals, iv)
	}
	return &Measurement{Started: start, Elapsed: time.Duration(len(rps)) * time.Second, Timeline: tl}
}

func constant(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// with returns xs with xs[from:to] set to v.
func with(xs []float64, from, to int, v float64) []float64 {
	out := append([]float64(nil), xs...)
	for i := from; i < to; i++ {
		out[i] = v
	}
	return out
}

func ramp(n int, from, to float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = from + (to-from)*float64(i)/float64(n-1)
	}
	return out
}

func TestUnsteady(t *testing.T) {
	const n = 20
	tests := []struct {
		name     string
		rps, p50 []float64
		noise    float64
		want     string // parts of the reason, split by "|"; "" for a steady verdict
	}{
		{"steady, noisy", constant(n, 2000), constant(n, 1000), 0.08, ""},
		{"steady, very noisy", constant(n, 2000), constant(n, 1000), 0.15, ""},
		{"steady, few requests per interval", constant(n, 30), constant(n, 1000), 0.1, ""},
		{"p50 step up", constant(n, 2000), with(constant(n, 1000), 10, n, 20000), 0.05, "rose|ms to 2|at 10 s of the run"},
		{"p50 step of 5 µs", constant(n, 2000), with(constant(n, 20), 10, n, 15), 0.02, ""},
		{"p50 step of 0.2 ms", constant(n, 2000), with(constant(n, 200), 10, n, 400), 0.02, "p50 rose"},
		{"p50 bump", constant(n, 2000), with(constant(n, 1100), 6, 10, 20000), 0.05, "between 6 s and 10 s of the run, and came back"},
		{"throughput falls a third", with(constant(n, 3000), 10, n, 2000), constant(n, 1000), 0.03, "throughput fell 3|req/s at 10 s of the run"},
		{"throughput step below the bar", with(constant(n, 3000), 10, n, 2700), constant(n, 1000), 0.02, ""},
		{"p50 ramp", constant(n, 2000), ramp(n, 1000, 3000), 0.03, "rose"},
		{"single outlier interval", constant(n, 2000), with(constant(n, 1000), 9, 10, 50000), 0.05, ""},
		{"two outlier intervals apart", with(constant(n, 2000), 4, 5, 200), with(constant(n, 1000), 14, 15, 50000), 0.05, ""},
		{"too short to judge", constant(6, 2000), with(constant(6, 1000), 3, 6, 20000), 0.02, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Several seeds: a rule that marks noise now and then fails.
			for seed := range uint64(20) {
				got := syntheticRun(seed, tt.rps, tt.p50, tt.noise).Unsteady()
				if (got == "") != (tt.want == "") {
					t.Fatalf("seed %d: Unsteady() = %q, want %q", seed, got, tt.want)
				}
				for _, part := range strings.Split(tt.want, "|") {
					if !strings.Contains(got, part) {
						t.Fatalf("seed %d: Unsteady() = %q, want it to say %q", seed, got, part)
					}
				}
			}
		})
	}
}

func TestUnsteadyWithoutTimeline(t *testing.T) {
	if got := (&Measurement{Elapsed: time.Minute}).Unsteady(); got != "" {
		t.Errorf("Unsteady() of a run without a timeline = %q, want \"\"", got)
	}
}

// TestUnsteadyJudgesTheMeasuredWindowOnly: a slow warm-up before Started
// is the run's preparation, not a shift during it.
func TestUnsteadyJudgesTheMeasuredWindowOnly(t *testing.T) {
	const n = 20
	m := syntheticRun(1, constant(n, 2000), with(constant(n, 1000), 0, 5, 30000), 0.03)
	if got := m.Unsteady(); !strings.Contains(got, "fell") {
		t.Fatalf("with the slow start measured, Unsteady() = %q, want a fall", got)
	}
	m.Started = m.Timeline.Start.Add(5 * time.Second)
	m.Elapsed -= 5 * time.Second
	if got := m.Unsteady(); got != "" {
		t.Errorf("with the slow start before the measured window, Unsteady() = %q, want \"\"", got)
	}
}

// TestUnsteadyLeavesAStarvedClientsThroughputAlone: a throughput fall in a
// run whose client waited for a CPU is the client's share moving, not the
// server; its latency is still judged.
func TestUnsteadyLeavesAStarvedClientsThroughputAlone(t *testing.T) {
	const n = 20
	fall := func() *Measurement {
		m := syntheticRun(1, with(constant(n, 3000), 10, n, 1000), constant(n, 1000), 0.03)
		m.Concurrency, m.ClientCores = 2, 2
		return m
	}
	quiet := fall()
	quiet.ClientCPUWait = 500 * time.Millisecond // 1.25 % of 2 × 20 s
	if got := quiet.Unsteady(); !strings.Contains(got, "throughput fell") {
		t.Errorf("with the client's CPU to itself, Unsteady() = %q, want a throughput fall", got)
	}
	starved := fall()
	starved.ClientCPUWait = 4 * time.Second // 10 %
	if got := starved.Unsteady(); got != "" {
		t.Errorf("with the client starved of CPU, Unsteady() = %q, want \"\"", got)
	}
	starved.Timeline = syntheticRun(1, constant(n, 3000), with(constant(n, 1000), 10, n, 5000), 0.03).Timeline
	if got := starved.Unsteady(); !strings.Contains(got, "p50 rose") {
		t.Errorf("with the client starved of CPU and a p50 step, Unsteady() = %q, want the p50 step", got)
	}
}

// TestUnsteadyAsksAStarvedClientForAMillisecond: a starved client's own
// scheduling delays move a loopback p50 from 0.05 to 0.6 ms; that is not
// judged a shift, while the same step with the client's CPU to itself is,
// and a step of several ms is either way.
func TestUnsteadyAsksAStarvedClientForAMillisecond(t *testing.T) {
	const n = 20
	step := func(to float64, wait time.Duration) string {
		m := syntheticRun(1, constant(n, 3000), with(constant(n, 50), 10, n, to), 0.03)
		m.Concurrency, m.ClientCores, m.ClientCPUWait = 2, 2, wait
		return m.Unsteady()
	}
	if got := step(600, 0); !strings.Contains(got, "p50 rose") {
		t.Errorf("0.05 → 0.6 ms, client not starved: Unsteady() = %q, want the p50 step", got)
	}
	if got := step(600, 4*time.Second); got != "" {
		t.Errorf("0.05 → 0.6 ms, client starved: Unsteady() = %q, want \"\"", got)
	}
	if got := step(5000, 4*time.Second); !strings.Contains(got, "p50 rose") {
		t.Errorf("0.05 → 5 ms, client starved: Unsteady() = %q, want the p50 step", got)
	}
}
