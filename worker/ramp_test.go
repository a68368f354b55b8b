package worker_test

import (
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// TestStagedJobs runs a job of rate stages and one of concurrency stages
// through the worker against a loopback target: the stored runs last the
// stages' sum, the rate ramp's timeline holds its intended starts per
// interval, rising, and the concurrency ramp's its connections, rising.
func TestStagedJobs(t *testing.T) {
	e := newEnv(t)
	url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(5 * time.Millisecond)
		ctx.SetBodyString("ok")
	})
	second := job.Duration(time.Second)
	for _, tc := range []struct {
		name   string
		stages []job.Stage
		// rising reads the quantity the ramp drives from an interval.
		rising func(abreport.TimelinePoint) float64
	}{
		{"rate", []job.Stage{{Rate: 400, Duration: second}},
			func(p abreport.TimelinePoint) float64 { return *p.IntendedRS }},
		{"concurrency", []job.Stage{{Concurrency: 6, Duration: second}},
			func(p abreport.TimelinePoint) float64 { return float64(*p.Concurrency) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := job.Spec{
				Targets:  []job.Target{{Name: "t", URL: url + "/"}},
				Stages:   tc.stages,
				Timeline: &job.Timeline{Interval: job.Duration(250 * time.Millisecond)},
			}
			got := e.runToSuccess(t, spec, 60*time.Second)
			runs, err := e.st.Runs(t.Context(), got.ID)
			if err != nil || len(runs) != 1 {
				t.Fatalf("runs = %d, %v; want 1", len(runs), err)
			}
			m, err := runs[0].DecodeMeasurement()
			if err != nil {
				t.Fatal(err)
			}
			tl := abreport.TimelineOf(m)
			if len(tl) < 4 || m.Elapsed < 900*time.Millisecond || m.Elapsed > 2*time.Second {
				t.Fatalf("%d intervals over %v, want 4 of 250 ms in about a second", len(tl), m.Elapsed)
			}
			prev := -1.0
			for i, p := range tl[:4] {
				v := tc.rising(p)
				t.Logf("interval %d: %s %.0f, %d requests", i, tc.name, v, p.Requests)
				if v <= prev {
					t.Errorf("interval %d: %s %.0f after %.0f, want it rising with the ramp", i, tc.name, v, prev)
				}
				prev = v
			}
		})
	}
}
