package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/testservers"
)

// gateAnalysis is what the test reads of a job's analysis.
type gateAnalysis struct {
	Verdict struct {
		Result   string `json:"result"`
		Failures []struct {
			Threshold   string   `json:"threshold"`
			Target      string   `json:"target"`
			Concurrency int      `json:"concurrency"`
			Requests    int      `json:"requests"`
			Value       float64  `json:"value"`
			BaselineJob string   `json:"baseline_job"`
			Baseline    *float64 `json:"baseline"`
			Bound       *float64 `json:"bound"`
			Reason      string   `json:"reason"`
		} `json:"failures"`
	} `json:"verdict"`
	CompareTo *struct {
		JobID string `json:"job_id"`
		Cells []struct {
			BaselinePoint int `json:"baseline_point"`
		} `json:"cells"`
	} `json:"compare_to"`
}

// TestRegressionGate runs the regression gate end to end: a main-branch
// job against a fast target, then a job comparing with "the latest
// succeeded main job" against a slowed-down target fails its relative
// threshold in every cell, and one against the fast target with a loose
// threshold passes.
func TestRegressionGate(t *testing.T) {
	m := startMain(t, nil)
	base := "http://" + m.Addr()
	fast := testservers.StartTarget(t, strings.Repeat("x", 64), 0).URL
	slow := testservers.StartTarget(t, "ok", 5*time.Millisecond).URL
	spec := func(url string, extra map[string]any) map[string]any {
		s := map[string]any{
			"targets": []map[string]any{{"name": "svc", "url": url}},
			"request": map[string]any{"keepalive": true},
			"sweep":   map[string]any{"concurrency": []int{1, 2}, "requests": []int{40}},
		}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}

	mainJob := submit(t, base, spec(fast, map[string]any{"labels": map[string]string{"branch": "main"}}))
	if j := waitJob(t, base, mainJob.ID, 30*time.Second); j.Status != "succeeded" {
		t.Fatalf("main job = %+v, want succeeded", j)
	}

	gate := map[string]any{"compare_to": map[string]any{"labels": map[string]string{"branch": "main"}},
		"labels": map[string]string{"branch": "feature"}}
	gate["thresholds"] = []string{"rps >= 0.95 * baseline.rps"}
	regressed := submit(t, base, spec(slow, gate))
	j := waitJob(t, base, regressed.ID, 30*time.Second)
	if j.Status != "succeeded" || j.Verdict != "fail" {
		t.Fatalf("regressed job = %+v, want succeeded with verdict fail", j)
	}
	a := analysis(t, base, regressed.ID)
	if got := len(a.Verdict.Failures); got != 2 {
		t.Fatalf("failures = %+v, want both cells", a.Verdict.Failures)
	}
	for i, f := range a.Verdict.Failures {
		if f.Target != "svc" || f.Concurrency != i+1 || f.Requests != 40 || f.BaselineJob != mainJob.ID ||
			f.Baseline == nil || f.Bound == nil || f.Value >= *f.Bound || *f.Bound != 0.95**f.Baseline || f.Reason != "" {
			t.Errorf("failure %d = %+v, want svc at c = %d below 0.95 × job %s's req/s", i, f, i+1, mainJob.ID)
		} else {
			t.Logf("c = %d: %.0f req/s against baseline %.0f (bound %.0f)", f.Concurrency, f.Value, *f.Baseline, *f.Bound)
		}
	}
	if a.CompareTo == nil || a.CompareTo.JobID != mainJob.ID || len(a.CompareTo.Cells) != 2 {
		t.Errorf("compare_to = %+v, want 2 cells against %s", a.CompareTo, mainJob.ID)
	}
	resp, md := call(t, http.MethodGet, base+"/v1/jobs/"+regressed.ID+"/report?format=markdown", nil)
	if resp.StatusCode != 200 || !strings.Contains(string(md), "## Compared with job `"+mainJob.ID+"`") ||
		!strings.Contains(string(md), "| baseline | bound |") {
		t.Errorf("markdown report = %d\n%s\nwant the comparison and the baseline and bound columns", resp.StatusCode, md)
	}

	gate["thresholds"] = []string{"rps >= 0.01 * baseline.rps", "p99_ms <= 100 * baseline.p99_ms + 50"}
	passing := submit(t, base, spec(fast, gate))
	if j := waitJob(t, base, passing.ID, 30*time.Second); j.Status != "succeeded" || j.Verdict != "pass" {
		t.Errorf("passing job = %+v, want succeeded with verdict pass (failures %+v)", j, analysis(t, base, passing.ID).Verdict.Failures)
	}
}

func analysis(t *testing.T, base, id string) gateAnalysis {
	t.Helper()
	resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+id+"/results", nil)
	var r struct {
		Analysis gateAnalysis `json:"analysis"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(b, &r) != nil {
		t.Fatalf("GET /v1/jobs/%s/results = %d %s", id, resp.StatusCode, b)
	}
	return r.Analysis
}
