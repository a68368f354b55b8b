package worker_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
)

// TestJobMixesHTTP1AndHTTP2 runs one job with two targets on the same h2c
// server, one over HTTP/1.1 and one over HTTP/2 (request options per
// target), through the queue and a Worker, and checks that the usual
// analysis compares them: the HTTP/2 target's points carry a comparison
// with the HTTP/1.1 baseline.
func TestJobMixesHTTP1AndHTTP2(t *testing.T) {
	e := newEnv(t)
	srv := testservers.StartH2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hello, both protocols\n"))
	}))
	spec := job.Spec{
		Targets: []job.Target{
			{Name: "h1", URL: srv.URL + "/", Request: &job.Request{KeepAlive: true}},
			{Name: "h2", URL: srv.URL + "/", Request: &job.Request{HTTPVersion: "2", MaxStreams: 4}},
		},
		Sweep:    job.Sweep{Concurrency: []int{2}, Requests: []int{300}, Repeats: 4},
		Baseline: "h1",
	}
	got := e.runToSuccess(t, spec, 60*time.Second)
	runs, err := e.st.Runs(t.Context(), got.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Result.CompleteRequests != 300 || r.Result.FailedRequests != 0 {
			t.Errorf("run %v: complete %d failed %d, want 300, 0", r.RunKey, r.Result.CompleteRequests, r.Result.FailedRequests)
		}
		wantVersion, wantStreams := "", 0
		if r.Target == "h2" {
			wantVersion, wantStreams = "2", 4
		}
		if r.Result.HTTPVersion != wantVersion || r.Result.MaxStreams != wantStreams {
			t.Errorf("run %v on %s: http_version %q max_streams %d, want %q, %d", r.RunKey, r.Target, r.Result.HTTPVersion, r.Result.MaxStreams, wantVersion, wantStreams)
		}
	}
	if p := srv.Protos(); p["HTTP/1.1"] != 1200 || p["HTTP/2.0"] != 1200 {
		t.Errorf("server saw %v, want 1200 requests of each protocol", p)
	}
	a := analysis.Analyze(got.Spec, runs)
	var compared int
	for _, ps := range a.Points {
		if ps.Point.Target != "h2" {
			continue
		}
		c := ps.Comparison
		if c == nil || c.Baseline != "h1" || c.RPSSignificance.Text == "" {
			t.Errorf("h2 point %+v: comparison %+v, want one against h1 with its significance", ps.Point, c)
			continue
		}
		compared++
		t.Logf("h2 vs h1: rps %s (%s), p50 %s (%s)", c.RPS, c.RPSSignificance.Text, c.P50, c.P50Significance.Text)
	}
	if compared != 1 {
		t.Errorf("%d h2 points compared, want 1", compared)
	}
}
