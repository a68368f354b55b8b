package api

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/loadgen"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/testservers"
)

// seedMeasuredJob runs a loopback target for a second in-process, as a
// worker would, and stores the job with its one run (point 0, repeat 0),
// measurement and timeline included.
func seedMeasuredJob(t *testing.T, env *testEnv) string {
	t.Helper()
	srv := testservers.StartTarget(t, "ok", time.Millisecond)
	spec := job.Spec{
		Targets: []job.Target{{Name: "a", URL: srv.URL + "/"}},
		Sweep:   job.Sweep{Concurrency: []int{2}, Duration: []job.Duration{job.Duration(time.Second)}, Repeats: 1},
	}.WithDefaults()
	started := time.Now()
	m, err := loadgen.Run(context.Background(), measure.Plan{URLs: []string{srv.URL + "/"}, Concurrency: 2, KeepAlive: true, Duration: time.Second})
	if err != nil {
		t.Fatalf("loadgen.Run: %v", err)
	}
	run, err := job.NewRun(job.RunKey{}, "a", 2, started, time.Now(), m, abreport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const id = "job_charts"
	env.store.mu.Lock()
	defer env.store.mu.Unlock()
	env.store.jobs[id] = &job.Job{ID: id, Owner: anonymousOwner, Spec: spec, Status: job.StatusSucceeded, CreatedAt: time.Now().UTC()}
	env.store.runs[id] = []job.Run{*run}
	return id
}

// TestReportRunCharts fetches a run's timeline and distribution as SVG
// and PNG through ?chart= and ?run=, and checks the default stays the
// sweep's chart.
func TestReportRunCharts(t *testing.T) {
	env := newTestEnv(t, nil)
	id := seedMeasuredJob(t, env)
	for _, tc := range []struct {
		query, contentType, filename string
		check                        func(*testing.T, []byte)
	}{
		{"format=svg&chart=timeline&run=0:0", "image/svg+xml", "job_charts.timeline.0-0.svg", contains("requests per second", "errors/s", "p99 latency", "time since the run")},
		{"format=svg&chart=distribution", "image/svg+xml", "job_charts.distribution.0-0.svg", contains("latency by percentile", ">99%<")},
		{"format=png&chart=timeline", "image/png", "job_charts.timeline.0-0.png", decodesPNG},
		{"format=png&chart=distribution&run=0:0", "image/png", "job_charts.distribution.0-0.png", decodesPNG},
		{"format=svg&chart=sweep", "image/svg+xml", "job_charts.svg", contains("throughput (req/s)", "concurrency (connections)")},
		{"format=svg", "image/svg+xml", "job_charts.svg", contains("throughput (req/s)", "concurrency (connections)")},
		{"format=svg&chart=capacity", "image/svg+xml", "job_charts.capacity.svg", contains("ran no capacity search")},
		{"format=png&chart=capacity", "image/png", "job_charts.capacity.png", decodesPNG},
	} {
		t.Run(tc.query, func(t *testing.T) {
			resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+id+"/report?"+tc.query, "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET report?%s = %d %s, want 200", tc.query, resp.StatusCode, body)
			}
			if got := resp.Header.Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
			if got := resp.Header.Get("Content-Disposition"); !strings.Contains(got, `"`+tc.filename+`"`) {
				t.Errorf("Content-Disposition = %q, want the file name %s", got, tc.filename)
			}
			tc.check(t, body)
		})
	}
}

func decodesPNG(t *testing.T, body []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("PNG chart: %v", err)
	}
	if w := img.Bounds().Dx(); w != 960 {
		t.Errorf("PNG chart is %d px wide, want 960", w)
	}
}

// TestReportRunChartErrors: a bad chart or run is a 400 naming the
// parameter, with a message that says what to send instead.
func TestReportRunChartErrors(t *testing.T) {
	env := newTestEnv(t, nil)
	one := seedMeasuredJob(t, env)
	many := seedFinishedJob(env)
	for _, tc := range []struct {
		id, query, field, detail string
	}{
		{one, "format=svg&chart=pie", "chart", `unknown chart "pie": want one of sweep, capacity, timeline, distribution`},
		{one, "format=html&chart=capacity", "chart", "chart capacity is drawn as format svg or png, not html"},
		{one, "format=svg&chart=capacity&run=0:0", "run", "chart capacity draws every probe of the job's search: leave run out"},
		{one, "format=json&chart=timeline", "chart", "chart timeline is drawn as format svg or png, not json"},
		{one, "format=html&chart=distribution&run=0:0", "chart", "not html"},
		{one, "format=svg&run=0:0", "run", "or the run of chart=timeline or chart=distribution (format svg or png), not of svg"},
		{one, "format=svg&chart=timeline&run=zero", "run", `run "zero" is not POINT:REPEAT, such as 0:0 (the first repeat of the first point); the job's runs are 0:0`},
		{one, "format=svg&chart=timeline&run=1:0", "run", "the job has no stored run 1:0; its runs are 0:0"},
		{many, "format=svg&chart=timeline", "run", "the job has 8 runs: name one as run=POINT:REPEAT; they are 0:0, 0:1, 1:0, 1:1, 2:0, 2:1, 3:0, 3:1"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+tc.id+"/report?"+tc.query, "")
			p := problem(t, resp, body)
			if resp.StatusCode != http.StatusBadRequest || p.Field != tc.field || !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("GET report?%s = %d %+v, want 400 naming field %s and saying %q", tc.query, resp.StatusCode, p, tc.field, tc.detail)
			}
		})
	}
	// A run stored without a measurement still draws: a chart saying so.
	resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+many+"/report?format=svg&chart=timeline&run=1:1", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "stored without a timeline") {
		t.Errorf("timeline of a run stored without one = %d %.300s, want 200 and a chart saying so", resp.StatusCode, body)
	}
}
