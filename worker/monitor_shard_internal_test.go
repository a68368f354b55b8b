package worker

import (
	"math"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/testservers"
)

// TestShardedRunScrapedOnce: a monitored point on two Workers is scraped
// by its coordinator alone, once per interval; the stored run's server
// CPU, over the merged run's span and on its timeline, is within 10 % of
// what the target's /proc says it used.
func TestShardedRunScrapedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2 s sharded run")
	}
	e := newShardEnv(t)
	target := testservers.StartCPUTarget(t, testservers.CPUTargetConfig{CPUs: "0", Favoured: true})
	e.startWorkers(t, 2, Config{JobLease: 2 * time.Second})
	spec := shardedSpec(target.URL+"/work?rounds=20000", 16, 0, 2)
	spec.Targets[0].Monitor = &monitor.Spec{Prometheus: target.MetricsURL()}
	spec.Sweep.Requests = nil
	spec.Sweep.Duration = []job.Duration{job.Duration(2 * time.Second)}
	spec.Timeline = &job.Timeline{Interval: job.Duration(250 * time.Millisecond)}
	before := testservers.ProcessCPU(t, target.Pid)
	j := e.submit(t, spec)
	if got := e.wait(t, j.ID, time.Minute); got.Status != job.StatusSucceeded {
		t.Fatalf("job = %s (%s), want succeeded", got.Status, got.Error)
	}
	used := testservers.ProcessCPU(t, target.Pid) - before
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %d, %v; want 1", len(runs), err)
	}
	s := runs[0].Server
	if s == nil || s.CPUSeconds == nil || s.Timeline == nil {
		t.Fatalf("the sharded run stored no server CPU: %+v", s)
	}
	m, err := runs[0].DecodeMeasurement()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, v := range s.Timeline.CPUSeconds {
		if v != nil {
			sum += *v
		}
	}
	t.Logf("/proc %.3f CPU s; stored %.3f (intervals %.3f over %d), %.2f cores busy, %d scrapes, run %v",
		used, *s.CPUSeconds, sum, len(s.Timeline.CPUSeconds), *s.CoresBusy, s.Scrapes, m.Elapsed)
	if math.Abs(*s.CPUSeconds-used) > 0.1*used || math.Abs(sum-used) > 0.1*used {
		t.Errorf("stored %.3f CPU s, intervals %.3f; /proc says %.3f: want both within 10 %%", *s.CPUSeconds, sum, used)
	}
	if len(s.Timeline.CPUSeconds) != len(m.Timeline.Intervals) {
		t.Errorf("server timeline has %d intervals, the merged run %d", len(s.Timeline.CPUSeconds), len(m.Timeline.Intervals))
	}
	// One recorder: the target's own count of the scrapes it served
	// (promhttp's, which counts a request once served, so not this one)
	// is the stored run's; a scrape from every shard would add theirs.
	exp, err := newScraper(nil, nil).Scrape(t.Context(), target.MetricsURL())
	if err != nil {
		t.Fatal(err)
	}
	var served float64
	for _, mt := range exp["promhttp_metric_handler_requests_total"].GetMetric() {
		served += mt.GetCounter().GetValue()
	}
	if int(served) != s.Scrapes {
		t.Errorf("the target served %v scrapes, the run counts %d: want one recorder's", served, s.Scrapes)
	}
}
