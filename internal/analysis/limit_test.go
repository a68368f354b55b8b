package analysis

import (
	"testing"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/monitor"
)

func server(busy, cores float64) *monitor.Server {
	s := &monitor.Server{CoresBusy: &busy, Cores: cores}
	if cores > 0 {
		share := busy / cores
		s.CPUShare = &share
	}
	return s
}

// TestLimitedBy: the client first, then the server's CPU share against
// 90 %, else neither; unknown without a share.
func TestLimitedBy(t *testing.T) {
	tests := []struct {
		name            string
		clientSat       bool
		servers         []*monitor.Server
		want            string
		wantBusy, share float64
	}{
		{"no monitor", false, []*monitor.Server{nil, nil}, "", 0, 0},
		{"cores unknown", false, []*monitor.Server{server(0.95, 0)}, "", 0.95, 0},
		{"client short of CPU", true, []*monitor.Server{server(1, 1)}, LimitedByClient, 1, 1},
		{"server at 96 %", false, []*monitor.Server{server(0.95, 1), server(0.97, 1)}, LimitedByServerCPU, 0.96, 0.96},
		{"server at 89 %", false, []*monitor.Server{server(1.78, 2)}, LimitedByNeither, 1.78, 0.89},
		{"a repeat without a scrape", false, []*monitor.Server{nil, server(0.2, 4)}, LimitedByNeither, 0.2, 0.05},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := job.PointSummary{ClientSaturated: tc.clientSat}
			judgeLimit(&ps, tc.servers)
			if ps.LimitedBy != tc.want {
				t.Errorf("limited_by = %q, want %q", ps.LimitedBy, tc.want)
			}
			if tc.wantBusy > 0 && (ps.ServerCoresBusy == nil || !near(ps.ServerCoresBusy.Mean, tc.wantBusy)) {
				t.Errorf("server_cores_busy = %+v, want mean %v", ps.ServerCoresBusy, tc.wantBusy)
			}
			if tc.want != "" && tc.want != LimitedByClient && (ps.ServerCPUShare == nil || !near(ps.ServerCPUShare.Mean, tc.share)) {
				t.Errorf("server_cpu_share = %+v, want mean %v", ps.ServerCPUShare, tc.share)
			}
		})
	}
}

// TestSaturationNamesTheServerCPU: the sentence says from which c the
// server's CPU is the limit, or that it had headroom at the last point.
func TestSaturationNamesTheServerCPU(t *testing.T) {
	s := jobtest.SweepSpec([]int{1, 2, 4, 8}, "lighttpd", "sleepy")
	runs := series(t, s, "lighttpd", 1000, 1900, 2300, 2310)
	for i, busy := range []float64{0.4, 0.8, 0.97, 1.2} {
		runs[i].Server = server(busy, 1)
	}
	slow := series(t, s, "sleepy", 100, 200, 400, 800)
	for i := range slow {
		slow[i].Server = server(0.05, 2)
	}
	a := Analyze(s, append(runs, slow...))
	want := map[string]string{
		"lighttpd": "lighttpd: req/s plateaus near 2310 from c = 4; latency grows no faster than concurrency; no failures; 0.97 of 1 core busy from c = 4: server CPU is the limit.",
		"sleepy":   "sleepy: req/s still rising at c = 8; latency grows no faster than concurrency; no failures; 0.05 of 2 cores busy at c = 8: the server's CPU had headroom, so the limit is elsewhere (latency, the network, locks or a queue).",
	}
	for _, sat := range a.Saturation {
		if sat.Sentence != want[sat.Target] {
			t.Errorf("%s:\n got %s\nwant %s", sat.Target, sat.Sentence, want[sat.Target])
		}
	}
	if got := a.Saturation[0].ServerCPUBoundFrom; got == nil || *got != 4 {
		t.Errorf("server_cpu_bound_from = %s, want 4", fmtp(got))
	}
	for _, p := range a.Points {
		want := LimitedByNeither
		if p.Point.Target == "lighttpd" && p.Point.Concurrency >= 4 {
			want = LimitedByServerCPU
		}
		if p.LimitedBy != want {
			t.Errorf("%s c = %d: limited_by = %q, want %q", p.Point.Target, p.Point.Concurrency, p.LimitedBy, want)
		}
	}
}
