package main

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
	"github.com/valyala/fasthttp"
)

// TestErrorsAreNotThroughput runs one job through the service against a
// healthy target, one answering only 500 and a closed port, each for a
// whole second (long enough for the client's CPU to be judged): the
// report's table and chart give the healthy target its req/s and the two
// others no throughput at all but their errors, and neither is blamed on
// the load generator. (The closed port fails the job: no run reached it.)
func TestErrorsAreNotThroughput(t *testing.T) {
	m := startOnRedis(t)
	ok := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("ok") })
	five := testservers.StartFasthttp(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		ctx.SetBodyString("boom")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	_ = ln.Close()

	j := submit(t, m.URL(), map[string]any{
		"name": "errors apart",
		"targets": []map[string]any{{"name": "ok", "url": ok + "/"}, {"name": "five", "url": five + "/"},
			{"name": "closed", "url": closed}},
		"sweep":            map[string]any{"concurrency": []int{2}, "duration": []string{"1s"}, "rate": []float64{200}},
		"allow_no_success": true,
	})
	// A target no run could reach fails the job, and keeps its runs.
	if got := waitJob(t, m.URL(), j.ID, time.Minute); got.Status != "failed" {
		_, b := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+j.ID, nil)
		t.Fatalf("job %s = %s, want failed for the closed port: %s", j.ID, got.Status, b)
	}

	_, body := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+j.ID+"/results", nil)
	var res struct {
		Runs []struct {
			Target string `json:"target"`
			Result struct {
				ClientSaturated bool   `json:"client_saturated"`
				ClientUnjudged  string `json:"client_unjudged"`
				Non2xx          int64  `json:"non_2xx_responses"`
				Failed          int64  `json:"failed_requests"`
			} `json:"result"`
		} `json:"runs"`
		Analysis struct {
			Points []struct {
				Point struct {
					Target string `json:"target"`
				} `json:"point"`
				RPS        struct{ Mean *float64 } `json:"rps"`
				GoodRPS    struct{ Mean *float64 } `json:"good_rps"`
				ErrorRatio struct{ Mean *float64 } `json:"error_ratio"`
			} `json:"points"`
		} `json:"analysis"`
	}
	if err := json.Unmarshal(body, &res); err != nil || len(res.Runs) != 3 {
		t.Fatalf("results %s: %v, want 3 runs", body, err)
	}
	for _, r := range res.Runs {
		if r.Target != "ok" && (r.Result.ClientSaturated || !strings.Contains(r.Result.ClientUnjudged, "no request succeeded")) {
			t.Errorf("run of %s: client_saturated %v, client_unjudged %q; want not judged, no request succeeded", r.Target, r.Result.ClientSaturated, r.Result.ClientUnjudged)
		}
	}
	for _, p := range res.Analysis.Points {
		good, errs := p.GoodRPS.Mean, p.ErrorRatio.Mean
		if good == nil || errs == nil {
			t.Fatalf("point %s has no good_rps or error_ratio: %s", p.Point.Target, body)
		}
		switch p.Point.Target {
		case "ok":
			if *good < 150 || *errs != 0 {
				t.Errorf("ok: good_rps %v, error_ratio %v; want about 200 and 0", *good, *errs)
			}
		default:
			if *good != 0 || *errs != 1 {
				t.Errorf("%s: good_rps %v, error_ratio %v; want 0 and 1", p.Point.Target, *good, *errs)
			}
		}
	}

	_, md := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+j.ID+"/report?format=markdown", nil)
	for _, row := range []string{"| five | no success (100 % errors) |", "| closed | no success (100 % errors) |"} {
		if !strings.Contains(string(md), row) {
			t.Errorf("markdown report lacks %q:\n%s", row, md)
		}
	}
	if strings.Contains(string(md), "†") {
		t.Errorf("markdown report marks a cell client-bound:\n%s", md)
	}
	_, svg := call(t, http.MethodGet, m.URL()+"/v1/jobs/"+j.ID+"/report?format=svg", nil)
	if n := strings.Count(string(svg), "✕"); n != 2 {
		t.Errorf("chart has %d no-success marks, want 2 (one per failing target)", n)
	}
	if !strings.Contains(string(svg), "nothing succeeded") || strings.Contains(string(svg), "†") {
		t.Error("chart's legend does not name the no-success mark, or it marks a cell client-bound")
	}
}
