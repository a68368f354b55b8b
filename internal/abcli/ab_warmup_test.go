package abcli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// TestABWarmup: --warmup 1 -t 1 loads the target for two seconds and
// reports the second: the JSON result's counts are the target's hits less
// the warm-up intervals' of the --timeline file, which marks them, and its
// clock covers the measured second.
func TestABWarmup(t *testing.T) {
	if testing.Short() {
		t.Skip("a 2 s run")
	}
	tg := testservers.StartCounting(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("hello") })
	file := filepath.Join(t.TempDir(), "t.ndjson")
	args := []string{"--json", "--timeline", file, "--warmup", "1", "-t", "1", "-c", "2", "-k", tg.URL}
	code, stdout, stderr := runABTest(t, context.Background(), args...)
	if code != 0 {
		t.Fatalf("benchq ab %v exit = %d; stderr:\n%s", args, code, stderr)
	}
	var result struct {
		Complete  int64     `json:"complete_requests"`
		Received  int64     `json:"total_transferred_bytes"`
		TimeTaken float64   `json:"time_taken_s"`
		StartedAt time.Time `json:"started_at"`
	}
	if err := json.Unmarshal([]byte(stdout), &result); err != nil {
		t.Fatalf("stdout: %v\n%s", err, stdout)
	}
	points := readTimeline(t, file)
	var all, warm, warmLines int64
	for i, p := range points {
		all += p.Requests
		if p.Warmup {
			warm += p.Requests
			warmLines++
			if i > 0 && !points[i-1].Warmup {
				t.Errorf("line %d is warm-up after a measured one", i+1)
			}
		}
	}
	if warmLines != 1 || warm == 0 || result.Complete == 0 || all != warm+result.Complete || all > tg.Hits() {
		t.Errorf("timeline: %d requests, %d in %d warm-up lines; result %d; target hit %d times: want one warm-up line, its requests and the result's adding up",
			all, warm, warmLines, result.Complete, tg.Hits())
	}
	if result.TimeTaken < 0.9 || result.TimeTaken > 1.5 {
		t.Errorf("time_taken_s = %v, want the measured second", result.TimeTaken)
	}
}
