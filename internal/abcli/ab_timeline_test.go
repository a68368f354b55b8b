package abcli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// TestABTimelineFile: --timeline writes one JSON object per interval and
// line, whose counts add up to the run's, in the open model with its
// rates; a run in which every request failed still gets its timeline.
func TestABTimelineFile(t *testing.T) {
	tg := testservers.StartCounting(t, func(ctx *fasthttp.RequestCtx) {
		if strings.HasSuffix(string(ctx.Path()), "/missing") {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
		}
		ctx.SetBodyString("hello")
	})
	dir := t.TempDir()
	tests := []struct {
		name             string
		args             []string
		requests, non2xx int64
		lines, minBytes  int
		open             bool
	}{
		{"closed", []string{"-n", "300", "-c", "3", "-k", tg.URL}, 300, 0, 1, 300, false},
		{"open, 1.5 s", []string{"-n", "150", "-c", "2", "--rate", "100", tg.URL}, 150, 0, 2, 150, true},
		{"non-2xx", []string{"-n", "50", "-c", "1", tg.URL + "missing"}, 50, 50, 1, 50, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".ndjson")
			args := append([]string{"--json", "--timeline", file}, tt.args...)
			code, stdout, stderr := runABTest(t, context.Background(), args...)
			if code != 0 {
				t.Fatalf("benchq ab %v exit = %d; stderr:\n%s", args, code, stderr)
			}
			var result struct {
				Complete int64 `json:"complete_requests"`
				Received int64 `json:"total_transferred_bytes"`
			}
			if err := json.Unmarshal([]byte(stdout), &result); err != nil {
				t.Fatalf("stdout: %v\n%s", err, stdout)
			}
			points := readTimeline(t, file)
			var requests, non2xx, bytes int64
			for i, p := range points {
				requests += p.Requests
				non2xx += p.Non2xx
				bytes += p.Bytes
				if p.TS != float64(i) || p.IntervalS != 1 {
					t.Errorf("line %d: t_s %v, interval_s %v; want %d, 1", i+1, p.TS, p.IntervalS, i)
				}
				if p.Requests > 0 && (p.P50Ms <= 0 || p.P50Ms > p.P99Ms || p.P99Ms > p.MaxMs) {
					t.Errorf("line %d: p50 %v p99 %v max %v ms", i+1, p.P50Ms, p.P99Ms, p.MaxMs)
				}
				if (p.IntendedRS != nil) != tt.open {
					t.Errorf("line %d: intended_rps %v in the open model %v", i+1, p.IntendedRS, tt.open)
				}
			}
			if len(points) < tt.lines || requests != tt.requests || requests != result.Complete || non2xx != tt.non2xx || bytes != result.Received {
				t.Errorf("%d lines sum to %d requests, %d non-2xx, %d bytes; want ≥ %d lines, %d (%d complete), %d, %d",
					len(points), requests, non2xx, bytes, tt.lines, tt.requests, result.Complete, tt.non2xx, result.Received)
			}
		})
	}
}

func readTimeline(t *testing.T, file string) []abreport.TimelinePoint {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []abreport.TimelinePoint
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p abreport.TimelinePoint
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("line %d: %v: %s", len(out)+1, err, sc.Bytes())
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
