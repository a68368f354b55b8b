package worker_test

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
)

// TestCapacitySearch runs a job searching two targets of known capacity
// (8 and 4 requests in service, each held 50 ms: 160 and 80 req/s), three
// times one after the other (at once, the three loads' clients delay one
// another's sends on a two-core machine, which the latencies, measured
// from the schedule, count against the servers). Every search must report its target's capacity within
// ±10 % with an interval that contains it, and the comparison must say
// the second has about half the first's (−50 % ± a tenth of that).
//
// The SLO, p50 < 200 ms (four holds), fails just above the capacity: the
// open model's schedule does not wait for the server, so at 10 % over it
// the line grows by a tenth of a second each second, and the later half
// of a 3 s probe waits over 150 ms on top of its hold. The interval's low
// edge allows for the overload a probe cannot see (analysis.unseenOverload:
// 150 ms of slack over half of 3 s, 10 %). The slack is wide because below
// the capacity a stall of the client (a test machine shared with other
// builds stops it for 100 ms and more) sends its late requests at once,
// and at 96 % of the capacity that line takes seconds to drain: with two
// holds of slack a search found the 160 req/s target failing at 153. The
// p50 rather than a tail for the same reason; a warm-up keeps the dials
// out of the probe.
func TestCapacitySearch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three capacity searches of about a minute")
	}
	if raceEnabled {
		// Three searches are five minutes of timing measurement; the run
		// without the race detector makes them, the resume test covers
		// the search's code under it.
		t.Skip("timing measurement: not under the race detector")
	}
	// One search in the suite (it must stay inside CI's time); the
	// acceptance check is three of three: BENCHQ_CAPACITY_RUNS=3.
	runs := 1
	if n, err := strconv.Atoi(os.Getenv("BENCHQ_CAPACITY_RUNS")); err == nil && n > 0 {
		runs = n
	}
	for i := range runs {
		t.Run(fmt.Sprint("run", i+1), func(t *testing.T) {
			searchTwoTargets(t)
		})
	}
}

func searchTwoTargets(t *testing.T) {
	e := newEnv(t)
	fast, slow := testservers.StartCapacity(t, 8, 50*time.Millisecond), testservers.StartCapacity(t, 4, 50*time.Millisecond)
	spec := job.Spec{
		Targets: []job.Target{{Name: "fast", URL: fast.URL}, {Name: "slow", URL: slow.URL}},
		Request: job.Request{KeepAlive: true},
		Sweep:   job.Sweep{Duration: []job.Duration{job.Duration(time.Second)}},
		Warmup:  job.Duration(500 * time.Millisecond),
		Search: &job.Search{SLO: []string{"p50_ms < 200", "failed_ratio < 0.01"}, MinRate: 20, MaxRate: 5000,
			ProbeDuration: job.Duration(3 * time.Second), MaxDuration: job.Duration(3 * time.Minute)},
	}
	j, task := e.create(t, spec)
	e.enqueue(t, task)
	e.startWorker(t)
	got := e.waitJob(t, j.ID, 8*time.Minute, "a terminal status", terminal)
	if got.Status != job.StatusSucceeded || got.Analysis == nil {
		t.Fatalf("job status = %s (error %q), want succeeded with an analysis", got.Status, got.Error)
	}
	caps := got.Analysis.Capacity
	if len(caps) != 2 {
		t.Fatalf("analysis.capacity = %+v, want two targets", caps)
	}
	for i, want := range []float64{fast.Capacity(), slow.Capacity()} {
		c := caps[i]
		t.Logf("%s: capacity %.0f, found %.0f [%.0f, %.0f] (%s) in %d probes, %d requests, %.1f s",
			c.Target, want, c.Rate, c.CILow, c.CIHigh, c.Reason, len(c.Probes), c.Requests, c.ElapsedS)
		if c.Reason != "converged" || math.Abs(c.Rate/want-1) > 0.10 || c.CILow > want || c.CIHigh < want {
			for _, p := range c.Probes {
				t.Logf("  probe %d at %.0f: passed %v, p50 %.1f ms, p99 %.1f ms, failed %.3f, achieved %.0f, late %d",
					p.N, p.Rate, p.Passed, p.P50Ms, p.P99Ms, p.FailedRatio, p.AchievedRate, p.LateStarts)
			}
			t.Errorf("%s: %.0f [%.0f, %.0f] (%s), want converged within 10 %% of %.0f and an interval holding it",
				c.Target, c.Rate, c.CILow, c.CIHigh, c.Reason, want)
		}
	}
	sc := caps[1]
	if sc.Pct == nil || sc.Baseline != "fast" || math.Abs(*sc.Pct/-50-1) > 0.10 {
		t.Errorf("slow against fast: %v, want −50 %% ± 5 against fast", sc.Pct)
	}
	t.Log(got.Analysis.CapacitySentence)
	// The probes are stored runs with their timelines.
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	for _, r := range runs {
		if _, _, ok := r.Probe(); !ok {
			continue
		}
		probes++
		m, err := r.DecodeMeasurement()
		if err != nil || m.Timeline == nil || m.Open == nil {
			t.Errorf("probe %v: stored measurement %v, timeline or open model missing", r.RunKey, err)
		}
	}
	if want := len(caps[0].Probes) + len(caps[1].Probes); probes != want {
		t.Errorf("stored probes = %d, want %d", probes, want)
	}
}

// TestCapacitySearchResumes stores three probes as a dead attempt would
// have left them and runs the job: the worker must read them, take the
// step the search takes after them (a climb to 160 req/s), number its
// probe after theirs, and count their time against the budget, which
// leaves room for that one probe only.
func TestCapacitySearchResumes(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartCapacity(t, 8, 10*time.Millisecond)
	spec := job.Spec{
		Targets: []job.Target{{Name: "a", URL: tg.URL}},
		Request: job.Request{KeepAlive: true},
		Sweep:   job.Sweep{Requests: []int{10}},
		Search: &job.Search{SLO: []string{"p50_ms < 200"}, MinRate: 20, MaxRate: 5000,
			ProbeDuration: job.Duration(time.Second), MaxDuration: job.Duration(4 * time.Second)},
	}
	j, task := e.create(t, spec)
	start := time.Now().UTC().Add(-time.Minute)
	for n, rate := range []float64{20, 40, 80} {
		r := job.Run{RunKey: job.ProbeKey(0, n), Target: "a", Concurrency: 1000,
			StartedAt: start, FinishedAt: start.Add(time.Second),
			Result: &abreport.Report{CompleteRequests: int64(rate), PercentilesMs: abreport.Percentiles{P50: 12, P99: 15},
				OpenModel: &abreport.OpenModel{RequestedRate: rate, AchievedRate: rate}}}
		if _, err := e.st.SaveRun(t.Context(), j.ID, &r); err != nil {
			t.Fatal(err)
		}
	}
	e.enqueue(t, task)
	e.startWorker(t)
	got := e.waitJob(t, j.ID, time.Minute, "a terminal status", terminal)
	if got.Status != job.StatusSucceeded || got.Analysis == nil || len(got.Analysis.Capacity) != 1 {
		t.Fatalf("job = %s (error %q), want succeeded with a capacity", got.Status, got.Error)
	}
	c := got.Analysis.Capacity[0]
	if c.Reason != "budget" || len(c.Probes) != 4 {
		t.Fatalf("capacity = %s after %d probes, want budget after 4 (3 stored, 1 run)", c.Reason, len(c.Probes))
	}
	if p := c.Probes[3]; p.N != 3 || p.Rate != 160 || p.AchievedRate < 150 || !p.Passed {
		t.Errorf("the resumed probe = %+v, want probe 3 at 160 req/s, passed", p)
	}
}

// TestCapacityProbeAborts searches a target that fails every other
// request under an SLO with "failed_ratio < 0.01": the SLO's ratio is
// judged while each probe goes, so a probe ends once it is certainly
// broken, a hundred or so requests in at 200 req/s, rather than running
// its 10 s, and is stored aborted by that entry; every probe fails, so
// the search ends at min_rate.
func TestCapacityProbeAborts(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartFailing(t, "hello benchq", 2)
	const probe = 10 * time.Second
	spec := job.Spec{
		Targets: []job.Target{{Name: "a", URL: tg.URL}},
		Sweep:   job.Sweep{Requests: []int{10}},
		Search: &job.Search{SLO: []string{"p50_ms < 200", "failed_ratio < 0.01"}, MinRate: 200, MaxRate: 5000,
			ProbeDuration: job.Duration(probe), MaxDuration: job.Duration(time.Minute)},
	}
	j, task := e.create(t, spec)
	e.enqueue(t, task)
	e.startWorker(t)
	got := e.waitJob(t, j.ID, time.Minute, "a terminal status", terminal)
	if got.Status != job.StatusSucceeded || got.Analysis == nil || len(got.Analysis.Capacity) != 1 {
		t.Fatalf("job = %s (error %q), want succeeded with a capacity", got.Status, got.Error)
	}
	if c := got.Analysis.Capacity[0]; c.Reason != "min_rate" || len(c.Probes) == 0 {
		t.Errorf("capacity = %s after %d probes, want min_rate", c.Reason, len(c.Probes))
	}
	runs, err := e.st.Runs(t.Context(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	for _, r := range runs {
		if _, _, ok := r.Probe(); !ok {
			continue
		}
		probes++
		took := r.FinishedAt.Sub(r.StartedAt)
		t.Logf("probe %d: aborted %v by %q after %v: %s", r.Repeat, r.Aborted, r.AbortedBy, took, r.AbortReason)
		// A generous bound: the abort needs 100 requests, half a second
		// at 200 req/s (0.6 to 2 s measured here, under the race detector
		// on a loaded machine); the measured time is logged.
		if !r.Aborted || r.AbortedBy != "failed_ratio < 0.01" || took > probe/2 {
			t.Errorf("probe %d: aborted %v by %q after %v, want aborted by failed_ratio < 0.01 well before %v",
				r.Repeat, r.Aborted, r.AbortedBy, took, probe)
		}
	}
	if probes == 0 {
		t.Error("no probe stored")
	}
}
