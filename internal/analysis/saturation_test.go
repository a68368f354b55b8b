package analysis

import (
	"fmt"
	"testing"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
)

func intp(n int) *int { return &n }

func fmtp(p *int) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// seed003 is the "statische Seite" table of seed 003: req/s at c = 1..512
// doubling, each the mean of three ab -t 600 runs.
func seed003() map[string][]float64 {
	return map[string][]float64{
		"apache-p4":       {126.2, 151.8, 163.2, 158.7, 163.6, 163.7, 163.0, 162.2, 161.1, 0},
		"apache-athlon":   {131.9, 144.5, 148.3, 154.7, 157.1, 157.6, 159.5, 160.1, 159.5, 159.6},
		"lighttpd-p4":     {119.6, 152.2, 155.0, 160.2, 161.5, 163.0, 162.9, 162.5, 160.8, 158.3},
		"lighttpd-athlon": {134.2, 143.8, 150.2, 154.7, 156.2, 158.9, 159.8, 161.0, 157.5, 155.7},
	}
}

// TestSaturationSeed003 applies the rules to seed 003's static page, by
// hand:
//   - apache-p4: 1→2 +20.3 %, 2→4 +7.5 %, from c = 4 (163.2) every later
//     point gains < 5 % per doubling (at most +0.1 %); the level is the
//     highest req/s from there, 163.7. Latency (c/rps) never grows 5 %
//     faster than c: the worst step, 4→8, is 163.2/158.7 = 1.028. Nothing
//     completes at 512.
//   - apache-athlon: 1→2 +9.6 %; from c = 2 (144.5) the gains per doubling
//     are 2.6 % (to 4), 3.5 % (to 8), 2.8 % (to 16) and less after; level
//     160.1.
//   - lighttpd-p4: 1→2 +27 %; from c = 2: 1.8 %, 2.6 %, 2.0 % …; level 163.0.
//   - lighttpd-athlon: 1→2 +7.2 %; from c = 2: 4.45 % (to 4), 3.7 %, 2.8 % …;
//     level 161.0; the 161.0 → 157.5 → 155.7 fall is 2.2 % and 1.2 %.
//
// The issue reads "a plateau near 160 req/s from c = 16" off the chart: the
// level is right (160–164) but under the 5 %-per-doubling rule every series
// has stopped rising by c = 2 or 4; the table shows no series whose gain is
// still ≥ 5 % per doubling after c = 8.
func TestSaturationSeed003(t *testing.T) {
	names := []string{"apache-p4", "apache-athlon", "lighttpd-p4", "lighttpd-athlon"}
	s := jobtest.SweepSpec([]int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, names...)
	var runs []job.Run
	for _, n := range names {
		runs = append(runs, series(t, s, n, seed003()[n]...)...)
	}
	want := []job.Saturation{
		{Target: "apache-p4", PlateauAt: intp(4), FailuresFrom: intp(512),
			Sentence: "apache-p4: req/s plateaus near 164 from c = 4; latency grows no faster than concurrency; failures from c = 512."},
		{Target: "apache-athlon", PlateauAt: intp(2),
			Sentence: "apache-athlon: req/s plateaus near 160 from c = 2; latency grows no faster than concurrency; no failures."},
		{Target: "lighttpd-p4", PlateauAt: intp(2),
			Sentence: "lighttpd-p4: req/s plateaus near 163 from c = 2; latency grows no faster than concurrency; no failures."},
		{Target: "lighttpd-athlon", PlateauAt: intp(2),
			Sentence: "lighttpd-athlon: req/s plateaus near 161 from c = 2; latency grows no faster than concurrency; no failures."},
	}
	checkSaturation(t, Analyze(s, runs).Saturation, want)
}

func checkSaturation(t *testing.T, got, want []job.Saturation) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("saturation = %d series %+v, want %d", len(got), got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Target != w.Target || fmtp(g.PlateauAt) != fmtp(w.PlateauAt) || fmtp(g.LatencyKneeAt) != fmtp(w.LatencyKneeAt) ||
			fmtp(g.FailuresFrom) != fmtp(w.FailuresFrom) || fmtp(g.ClientBoundFrom) != fmtp(w.ClientBoundFrom) || g.Sentence != w.Sentence {
			t.Errorf("saturation[%d] = %s plateau %s knee %s failures %s %q,\nwant %s plateau %s knee %s failures %s %q",
				i, g.Target, fmtp(g.PlateauAt), fmtp(g.LatencyKneeAt), fmtp(g.FailuresFrom), g.Sentence,
				w.Target, fmtp(w.PlateauAt), fmtp(w.LatencyKneeAt), fmtp(w.FailuresFrom), w.Sentence)
		}
	}
}

// TestSaturationSyntheticKnees uses series whose knees are known by
// construction.
func TestSaturationSyntheticKnees(t *testing.T) {
	tests := []struct {
		name string
		conc []int
		rps  []float64
		want job.Saturation
	}{
		{"linear then flat", []int{1, 2, 4, 8, 16, 32}, []float64{100, 200, 400, 800, 820, 830},
			// 800 → 820 is +2.5 %, 800 → 830 over two doublings +1.9 % each.
			job.Saturation{PlateauAt: intp(8), Sentence: "t: req/s plateaus near 830 from c = 8; latency grows no faster than concurrency; no failures."}},
		{"still rising", []int{1, 2, 4}, []float64{100, 200, 400},
			job.Saturation{Sentence: "t: req/s still rising at c = 4; latency grows no faster than concurrency; no failures."}},
		{"collapse", []int{1, 2, 4, 8, 16}, []float64{100, 200, 400, 300, 150},
			// latency ratio 8/4 steps: (8/300)/(4/400) = 2.67 > 2·1.05.
			job.Saturation{PlateauAt: intp(4), PeakAt: intp(4), FallPct: 62.5, LatencyKneeAt: intp(8), Sentence: "t: req/s peaks near 400 at c = 4, then falls 62 % by c = 16; latency grows faster than concurrency from c = 8; no failures."}},
		{"a 23 % fall is no plateau", []int{8, 16, 32, 64}, []float64{8000, 8140, 7000, 6268},
			job.Saturation{PlateauAt: intp(8), PeakAt: intp(16), FallPct: 23, LatencyKneeAt: intp(32), Sentence: "t: req/s peaks near 8140 at c = 16, then falls 23 % by c = 64; latency grows faster than concurrency from c = 32; no failures."}},
		{"a 9 % fall stays a plateau", []int{8, 16, 32}, []float64{8000, 8100, 7371},
			job.Saturation{PlateauAt: intp(8), LatencyKneeAt: intp(32), Sentence: "t: req/s plateaus near 8100 from c = 8; latency grows faster than concurrency from c = 32; no failures."}},
		{"dip then rise is no plateau", []int{1, 2, 4, 8}, []float64{100, 102, 150, 155},
			// 1→2 +2 %, but 1→4 is +22 % per doubling: the plateau starts at 4.
			job.Saturation{PlateauAt: intp(4), Sentence: "t: req/s plateaus near 155 from c = 4; latency grows no faster than concurrency; no failures."}},
		{"steps of ×5 and ×2 normalised to a doubling", []int{10, 50, 100}, []float64{1000, 1100, 1140},
			// +10 % over log2(5) = 2.32 doublings is +4.19 % per doubling; 10 → 100: +4.02 %.
			job.Saturation{PlateauAt: intp(10), Sentence: "t: req/s plateaus near 1140 from c = 10; latency grows no faster than concurrency; no failures."}},
		{"steep ×5 step", []int{10, 50, 100}, []float64{1000, 1300, 1340},
			// +30 % over 2.32 doublings is +12 % per doubling; 50 → 100 +3.1 %.
			job.Saturation{PlateauAt: intp(50), Sentence: "t: req/s plateaus near 1340 from c = 50; latency grows no faster than concurrency; no failures."}},
		{"latency exactly 5 % faster is no knee", []int{1, 2}, []float64{105, 100},
			job.Saturation{PlateauAt: intp(1), Sentence: "t: req/s plateaus near 105 from c = 1; latency grows no faster than concurrency; no failures."}},
		{"dead from the start", []int{1, 2}, []float64{0, 0},
			job.Saturation{FailuresFrom: intp(1), Sentence: "t: no request completed at any concurrency; latency grows no faster than concurrency; failures from c = 1."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := jobtest.SweepSpec(tt.conc, "t")
			tt.want.Target = "t"
			checkSaturation(t, Analyze(s, series(t, s, "t", tt.rps...)).Saturation, []job.Saturation{tt.want})
		})
	}
}

func TestSaturationFailedRequests(t *testing.T) {
	s := jobtest.SweepSpec([]int{1, 2, 4}, "t")
	runs := series(t, s, "t", 100, 150, 155)
	runs[2].Result.FailedRequests, runs[2].Result.Failed.Timeout = 3, 3
	want := job.Saturation{Target: "t", PlateauAt: intp(2), FailuresFrom: intp(4),
		Sentence: "t: req/s plateaus near 155 from c = 2; latency grows no faster than concurrency; failures from c = 4."}
	checkSaturation(t, Analyze(s, runs).Saturation, []job.Saturation{want})
}

// TestSaturationClientBound: a point is client-bound when any of its
// repeats was, and the series says from where its plateau may be the
// load generator's.
func TestSaturationClientBound(t *testing.T) {
	s := jobtest.SweepSpec([]int{1, 2, 4}, "t")
	s.Sweep.Repeats = 2
	runs := runsFor(t, s, "t", 1, abRun(1, 100), abRun(1, 100))
	runs = append(runs, runsFor(t, s, "t", 2, abRun(2, 150), abRun(2, 150))...)
	runs = append(runs, runsFor(t, s, "t", 4, abRun(4, 155), abRun(4, 155))...)
	runs[3].Result.ClientSaturated = true // c = 2, second repeat only
	runs[5].Result.ClientSaturated = true
	a := Analyze(s, runs)
	for _, p := range a.Points {
		if want := p.Point.Concurrency >= 2; p.ClientSaturated != want {
			t.Errorf("c = %d: ClientSaturated = %v, want %v", p.Point.Concurrency, p.ClientSaturated, want)
		}
	}
	want := job.Saturation{Target: "t", PlateauAt: intp(2), ClientBoundFrom: intp(2),
		Sentence: "t: req/s plateaus near 155 from c = 2; latency grows no faster than concurrency; no failures; the load generator was short of CPU from c = 2, so req/s there measures the client."}
	checkSaturation(t, a.Saturation, []job.Saturation{want})
}

func TestSaturationSlices(t *testing.T) {
	one := jobtest.SweepSpec([]int{4}, "t")
	if sat := Analyze(one, series(t, one, "t", 100)).Saturation; sat != nil {
		t.Errorf("Analyze(one concurrency).Saturation = %+v, want none", sat)
	}
	s := job.Spec{Targets: []job.Target{{Name: "t", URL: "http://127.0.0.1:18080/"}},
		Sweep: job.Sweep{Concurrency: []int{1, 2}, Requests: []int{100, 1000}, Repeats: 1}}
	var runs []job.Run
	for _, p := range s.Points() {
		runs = append(runs, job.Run{RunKey: job.RunKey{Point: p.Index}, Target: "t", Result: abRun(p.Concurrency, float64(p.Concurrency*p.Requests))})
	}
	got := Analyze(s, runs).Saturation
	if len(got) != 2 || got[0].Requests != 100 || got[1].Requests != 1000 ||
		got[0].Sentence != "t (n = 100): req/s still rising at c = 2; latency grows no faster than concurrency; no failures." {
		t.Errorf("Analyze(n = 100, 1000).Saturation = %+v, want one series per request count, named", got)
	}
}

func TestRoughly(t *testing.T) {
	for in, want := range map[float64]string{163.7: "164", 160.1: "160", 1347.13: "1350", 16.94: "16.9", 0.55: "0.55", 0: "0", 99950: "100000"} {
		if got := roughly(in); got != want {
			t.Errorf("roughly(%v) = %q, want %q", in, got, want)
		}
	}
}
