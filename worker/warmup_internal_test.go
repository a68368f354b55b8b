package worker

import (
	"testing"
	"time"

	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// TestServedWarmupWindow submits a job with "warmup": "1s" and a 1 s
// duration through the API to a Worker on a real redis-server: the
// stored result covers the measured second, the served timeline keeps
// the warm-up's intervals marked, and its counts are the result's plus
// theirs.
func TestServedWarmupWindow(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2 s run through the service")
	}
	e := newShardEnv(t)
	tg := testservers.StartCounting(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	e.startWorkers(t, 1, Config{})
	c, _ := e.apiClient(t)
	sub, err := c.Submit(t.Context(), client.Submission{Spec: []byte(`{"targets":[{"url":"` + tg.URL + `"}],
		"sweep":{"concurrency":[2],"duration":["1s"]},"warmup":"1s","timeline":{"interval":"500ms"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.wait(t, sub.Job.ID, time.Minute); got.Status != "succeeded" {
		t.Fatalf("job = %s (%s), want succeeded", got.Status, got.Error)
	}
	res, err := c.Results(t.Context(), sub.Job.ID, client.ResultsOptions{Timeline: true})
	if err != nil || len(res.Runs) != 1 || res.Runs[0].Timeline == nil || res.Runs[0].Result == nil {
		t.Fatalf("results?timeline=true = %.500s, %v; want one run with a result and a timeline", res.Raw, err)
	}
	run := res.Runs[0]
	var all, warm int64
	var warmLines int
	for _, p := range run.Timeline.Intervals {
		all += p.Requests
		if p.Warmup {
			warm += p.Requests
			warmLines++
		}
	}
	r := run.Result
	if warmLines != 2 || warm == 0 || r.CompleteRequests == 0 || all != warm+r.CompleteRequests {
		t.Errorf("timeline: %d requests, %d in %d warm-up intervals; result %d: want two warm-up intervals and the counts adding up",
			all, warm, warmLines, r.CompleteRequests)
	}
	if r.TimeTakenS < 0.9 || r.TimeTakenS > 1.5 {
		t.Errorf("time_taken_s = %v, want the measured second", r.TimeTakenS)
	}
}
