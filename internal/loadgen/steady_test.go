package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// The runs the steadiness tests judge: 6 s at c=2, kept alive, cut in
// 250 ms intervals (with 1 s ones a 6 s run has too few whole intervals
// to be judged at all), ten of each.
const (
	steadyRuns     = 10
	steadyDuration = 6 * time.Second
	steadyInterval = 250 * time.Millisecond
)

// unsteadyRuns runs the plan for url steadyRuns times, before each run
// calling begin (if any) with the instant the run will start at, and
// returns how many results were marked unsteady; every verdict is logged.
func unsteadyRuns(t *testing.T, url string, begin func(time.Time)) int {
	t.Helper()
	marked := 0
	for i := range steadyRuns {
		start := time.Now().Add(200 * time.Millisecond)
		if begin != nil {
			begin(start)
		}
		m, err := Run(context.Background(), measure.Plan{
			URLs: []string{url}, Concurrency: 2, KeepAlive: true,
			Duration: steadyDuration, TimelineInterval: steadyInterval, StartAt: start,
		})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		r := abreport.FromMeasurement(m, abreport.Options{})
		if r.Unsteady != (r.UnsteadyReason != "") {
			t.Fatalf("run %d: unsteady %v with reason %q", i, r.Unsteady, r.UnsteadyReason)
		}
		if r.Unsteady {
			marked++
		}
		t.Logf("run %d: %d requests, %.0f req/s, p50 %.3f ms, client CPU %.2f s + %.2f s waiting: unsteady %v %s", i, r.CompleteRequests, r.RequestsPerSecond, r.PercentilesMs.P50, r.ClientCPUS, r.ClientCPUWaitS, r.Unsteady, r.UnsteadyReason)
	}
	return marked
}

// TestUnsteadyMarksALatencyStep: a target answering in 1 ms for 2 s, 20 ms
// for 2 s, then 1 ms again is marked in every run, and the reason names
// the stretch.
func TestUnsteadyMarksALatencyStep(t *testing.T) {
	if testing.Short() {
		t.Skip("ten 6 s runs")
	}
	srv := testservers.StartSlowStretch(t)
	if n := unsteadyRuns(t, srv.URL+"/", srv.Begin); n != steadyRuns {
		t.Errorf("%d of %d runs of a target with a 20 ms stretch marked unsteady, want all", n, steadyRuns)
	}
}

// TestUnsteadyLeavesSteadyTargetsAlone: a real nginx and a fasthttp
// server, steady by construction, are marked in none of their runs, on a
// machine that other work shares (false marks are the failure that
// matters).
func TestUnsteadyLeavesSteadyTargetsAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("twenty 6 s runs")
	}
	t.Run("nginx", func(t *testing.T) {
		srv := testservers.Nginx(t, testservers.Files{"page.html": fixedBody(1024)})
		if n := unsteadyRuns(t, srv.URL+"/page.html", nil); n != 0 {
			t.Errorf("%d of %d runs of a steady nginx marked unsteady, want none", n, steadyRuns)
		}
	})
	t.Run("fasthttp", func(t *testing.T) {
		url := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
			ctx.SetBodyString(strings.Repeat("x", 1024))
		})
		if n := unsteadyRuns(t, url+"/", nil); n != 0 {
			t.Errorf("%d of %d runs of a steady fasthttp server marked unsteady, want none", n, steadyRuns)
		}
	})
}
