package worker_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/testservers"
)

// TestMonitoredJob runs a job on two real targets with monitor endpoints:
// a Go server pinned to one core whose handler burns CPU (at nice -20, so
// that other work on the machine does not keep it from its core), and
// one whose handler sleeps. Each run stores the server's CPU within 10 % of what
// the target's /proc/PID/stat says it used, per run and summed over the
// run's timeline intervals; the analysis says the first was limited by
// its CPU and the second by neither.
func TestMonitoredJob(t *testing.T) {
	e := newEnv(t)
	busy := testservers.StartCPUTarget(t, testservers.CPUTargetConfig{CPUs: "0", Favoured: true})
	sleepy := testservers.StartCPUTarget(t, testservers.CPUTargetConfig{CPUs: "1"})
	spec := job.Spec{
		Targets: []job.Target{
			{Name: "busy", URL: busy.URL + "/work?rounds=20000", Monitor: &monitor.Spec{Prometheus: busy.MetricsURL()}},
			{Name: "sleepy", URL: sleepy.URL + "/sleep?ms=20", Monitor: &monitor.Spec{Prometheus: sleepy.MetricsURL(), Cores: 1}},
		},
		Sweep:    job.Sweep{Concurrency: []int{16}, Duration: []job.Duration{job.Duration(2 * time.Second)}, Repeats: 1},
		Timeline: &job.Timeline{Interval: job.Duration(250 * time.Millisecond)},
	}
	before := map[string]float64{"busy": testservers.ProcessCPU(t, busy.Pid), "sleepy": testservers.ProcessCPU(t, sleepy.Pid)}
	got := e.runToSuccess(t, spec, 60*time.Second)
	used := map[string]float64{"busy": testservers.ProcessCPU(t, busy.Pid) - before["busy"], "sleepy": testservers.ProcessCPU(t, sleepy.Pid) - before["sleepy"]}
	runs, err := e.st.Runs(t.Context(), got.ID)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs = %d, %v; want 2", len(runs), err)
	}
	for _, r := range runs {
		s := r.Server
		if s == nil || s.CPUSeconds == nil || s.Timeline == nil {
			t.Fatalf("run on %s stored no server CPU: %+v", r.Target, s)
		}
		m, err := r.DecodeMeasurement()
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, v := range s.Timeline.CPUSeconds {
			if v != nil {
				sum += *v
			}
		}
		t.Logf("%s: %d requests, /proc %.3f CPU s; stored %.3f s (intervals %.3f over %d), %.2f of %v cores (%s), %.3f ms/request, scrapes %d",
			r.Target, r.Result.CompleteRequests, used[r.Target], *s.CPUSeconds, sum, len(s.Timeline.CPUSeconds), *s.CoresBusy, s.Cores, s.CoresFrom, *s.CPUMsPerRequest, s.Scrapes)
		if len(s.Timeline.CPUSeconds) != len(m.Timeline.Intervals) || s.Timeline.IntervalMs != m.Timeline.Interval.Milliseconds() {
			t.Errorf("%s: server timeline %d × %d ms, run timeline %d × %v: want the same grid",
				r.Target, len(s.Timeline.CPUSeconds), s.Timeline.IntervalMs, len(m.Timeline.Intervals), m.Timeline.Interval)
		}
		if r.Target == "busy" {
			// The sleepy target's CPU is a few ms, below /proc's 10 ms
			// tick: only the busy one's is held to 10 %.
			if math.Abs(*s.CPUSeconds-used["busy"]) > 0.10*used["busy"] || math.Abs(sum-used["busy"]) > 0.10*used["busy"] {
				t.Errorf("busy: stored %.3f CPU s, intervals %.3f; /proc says %.3f: want both within 10 %%", *s.CPUSeconds, sum, used["busy"])
			}
		}
		if s.ScrapeErrors != 0 {
			t.Errorf("%s: %d scrapes failed: %s", r.Target, s.ScrapeErrors, s.Message)
		}
	}
	if got.Analysis == nil {
		t.Fatal("no analysis stored")
	}
	for _, p := range got.Analysis.Points {
		want := map[string]string{"busy": analysis.LimitedByServerCPU, "sleepy": analysis.LimitedByNeither}[p.Point.Target]
		if p.LimitedBy != want {
			t.Errorf("%s: limited_by = %q (server cpu share %+v, client saturated %v), want %q",
				p.Point.Target, p.LimitedBy, p.ServerCPUShare, p.ClientSaturated, want)
		}
	}
}

// TestMonitorFailuresNeverFailTheRun: metrics endpoints the address
// policy refuses, that hang, that answer garbage: every run completes and
// is stored, its failed scrapes counted and the problem named.
func TestMonitorFailuresNeverFailTheRun(t *testing.T) {
	e := newEnv(t)
	target := testservers.StartTarget(t, "hello benchq", 0)
	hang := testservers.StartHostile(t, testservers.Silent())
	garbage := testservers.StartHostile(t, testservers.Answer("garbage", []byte("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot { ok\n")))
	endpoints := map[string]struct{ url, says string }{
		"refused": {"http://10.0.0.1:9100/metrics", "refused by the address policy"},
		"hangs":   {hang.URL, "no answer within"},
		"garbage": {garbage.URL, "is not Prometheus text format"},
	}
	spec := job.Spec{Sweep: job.Sweep{Concurrency: []int{2}, Requests: []int{200}, Repeats: 1}}
	for name, ep := range endpoints {
		spec.Targets = append(spec.Targets, job.Target{Name: name, URL: target.URL, Monitor: &monitor.Spec{Prometheus: ep.url}})
	}
	j := e.runToSuccess(t, spec, 60*time.Second)
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs = %d, %v; want 3", len(runs), err)
	}
	for _, r := range runs {
		s, want := r.Server, endpoints[r.Target].says
		if r.Result.CompleteRequests != 200 || s == nil || s.ScrapeErrors < 2 || s.ScrapeErrors != s.Scrapes ||
			!strings.Contains(s.Message, want) || s.CPUSeconds != nil {
			t.Errorf("%s: %d complete, server %+v; want 200 complete, every scrape failed, the message saying %q", r.Target, r.Result.CompleteRequests, s, want)
		}
	}
}

// TestSettleBeforeEachRun: a CPU-heavy server on one core, runs that end
// with requests in flight, which the server goes on serving. With
// sweep.settle every run waits for the server to fall quiet before its
// load and records the wait: the second run waits out the first's queue.
func TestSettleBeforeEachRun(t *testing.T) {
	e := newEnv(t)
	busy := testservers.StartCPUTarget(t, testservers.CPUTargetConfig{CPUs: "0"})
	spec := job.Spec{
		Targets: []job.Target{{Name: "busy", URL: busy.URL + "/work?rounds=2000000", Monitor: &monitor.Spec{Prometheus: busy.MetricsURL()}}},
		Sweep: job.Sweep{Concurrency: []int{16}, Duration: []job.Duration{job.Duration(3 * time.Second)}, Repeats: 2,
			Settle: job.Duration(30 * time.Second)},
	}
	got := e.runToSuccess(t, spec, 90*time.Second)
	runs, err := e.st.Runs(t.Context(), got.ID)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs = %d, %v; want 2", len(runs), err)
	}
	for _, r := range runs {
		if r.Server == nil || r.Server.Settled == nil {
			t.Fatalf("run %d stored no settle: %+v", r.Repeat, r.Server)
		}
		s := r.Server.Settled
		t.Logf("run %d: %d complete; settled %+v", r.Repeat, r.Result.CompleteRequests, *s)
		if !s.Quiet {
			t.Errorf("run %d began on a busy server: %+v", r.Repeat, *s)
		}
	}
	second := runs[0]
	if runs[1].Repeat == 1 {
		second = runs[1]
	}
	// 16 requests of about 0.14 s of CPU each share one core: the first
	// 16 end after about 2.2 s, the next 16 are left with 1.5 s to go.
	if w := second.Server.Settled.WaitedS; w < 0.8 {
		t.Errorf("the second run waited %.2f s: the first left about 1.5 s of CPU queued on one core, want it to wait that out", w)
	}
}
