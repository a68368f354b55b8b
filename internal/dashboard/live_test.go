package dashboard

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// TestLivePageData: a running job's page gives live.js what the ETA and
// the chart need: the job's start and the server's clock in ms, the
// job's estimate, and each point's requests, duration and rate in the
// points' order.
func TestLivePageData(t *testing.T) {
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	spec := job.Spec{
		Targets: []job.Target{{Name: "a", URL: "http://127.0.0.1:1/"}},
		Sweep:   job.Sweep{Concurrency: []int{1, 4}, Duration: []job.Duration{job.Duration(5 * time.Second)}, Requests: []int{100}, Repeats: 2},
	}.WithDefaults() // four points: c=1 n=100, c=1 t=5s, c=4 n=100, c=4 t=5s
	j := &job.Job{ID: "j1", Status: job.StatusRunning, Spec: spec, StartedAt: &started,
		Progress: job.Progress{RunsDone: 1, RunsTotal: 4}}
	before := time.Now().UnixMilli()
	d := jobData{Job: j, Active: true, Repeats: 2, Live: newLiveData(j, spec.Points())}
	if d.Live.NowMS < before || d.Live.NowMS > time.Now().UnixMilli() {
		t.Errorf("NowMS = %d, want the server's clock now", d.Live.NowMS)
	}
	h, err := New(Config{API: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := h.pages["job"].Execute(&page, d); err != nil {
		t.Fatalf("render job page: %v", err)
	}
	for _, want := range []string{
		`data-started-ms="1767323045000"`,
		`data-estimate-s="` + seconds(spec.Estimate()) + `"`,
		`data-runs-total="4"`, `data-runs-done="1"`,
		`data-point-requests="100 0 100 0"`, `data-point-durations="0.000 5.000 0.000 5.000"`, `data-point-rates="0 0 0 0"`,
		`id="eta"`, `id="chart"`,
	} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("the running job's page lacks %s", want)
		}
	}
}
