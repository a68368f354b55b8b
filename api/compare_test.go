package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// succeed moves a stored job to succeeded, as a worker would.
func (e *storeEnv) succeed(t *testing.T, id string) {
	t.Helper()
	_, err := e.st.UpdateJob(t.Context(), id, func(j *job.Job) error {
		now := time.Now().UTC()
		if err := j.Transition(job.StatusRunning, now); err != nil {
			return err
		}
		return j.Transition(job.StatusSucceeded, now)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func withCompareTo(compareTo string, thresholds string) string {
	return `{"labels":{"branch":"feature"},"targets":[{"name":"a","url":"http://127.0.0.1:9000/"}],
	 "sweep":{"concurrency":[1],"requests":[10]},"compare_to":` + compareTo + `,"thresholds":[` + thresholds + `]}`
}

func TestCompareToResolvesAtSubmission(t *testing.T) {
	env, _ := miniEnv(t)
	_, old, _, _ := env.post(t, nil, validSpec) // branch main
	env.succeed(t, old.ID)
	_, newest, _, _ := env.post(t, nil, validSpec)
	env.succeed(t, newest.ID)
	_, queued, _, _ := env.post(t, nil, validSpec) // newest of all, but not succeeded

	tests := []struct {
		name      string
		compareTo string
		want      string
	}{
		{"selector", `{"labels":{"branch":"main"}}`, newest.ID},
		{"selector with status", `{"labels":{"branch":"main"},"status":"queued"}`, queued.ID},
		{"job id", `"` + old.ID + `"`, old.ID},
		{"job id matching its selector", `{"job_id":"` + old.ID + `","labels":{"branch":"main"}}`, old.ID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, jr, p, _ := env.post(t, nil, withCompareTo(tt.compareTo, `"rps >= 0.95 * baseline.rps"`))
			if status != http.StatusAccepted {
				t.Fatalf("POST = %d %+v, want 202", status, p)
			}
			if ct := jr.Spec.CompareTo; ct == nil || ct.JobID != tt.want {
				t.Errorf("compare_to = %+v, want job_id %s", ct, tt.want)
			}
			stored, err := env.st.GetJob(t.Context(), jr.ID)
			if err != nil || stored.Spec.CompareTo == nil || stored.Spec.CompareTo.JobID != tt.want {
				t.Errorf("stored compare_to = %+v, %v; want job_id %s", stored.Spec.CompareTo, err, tt.want)
			}
		})
	}
}

func TestCompareToRefusals(t *testing.T) {
	env, _ := miniEnv(t)
	_, main, _, _ := env.post(t, nil, validSpec)
	env.succeed(t, main.ID)
	// A job of another API key: indistinguishable from a missing one.
	foreign := job.New(job.NewID(), "bob", job.Spec{Targets: []job.Target{{Name: "a", URL: "http://127.0.0.1:9000/"}}}, time.Now().UTC())
	if err := env.st.CreateJob(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		body  string
		field string
	}{
		{"selector matching nothing", withCompareTo(`{"labels":{"branch":"nope"}}`, `"rps > 1"`), "compare_to"},
		{"missing job id", withCompareTo(`"01JC3W9Q5V1ZK2M4N6P8R0T2V4"`, `"rps > 1"`), "compare_to"},
		{"another owner's job", withCompareTo(`"`+foreign.ID+`"`, `"rps > 1"`), "compare_to"},
		{"job id not matching its selector", withCompareTo(`{"job_id":"`+main.ID+`","status":"failed"}`, `"rps > 1"`), "compare_to"},
		{"relative threshold without compare_to", `{"targets":[{"url":"http://127.0.0.1:9000/"}],"thresholds":["rps >= 0.95 * baseline.rps"]}`, "thresholds[0]"},
		{"unknown baseline metric", withCompareTo(`"`+main.ID+`"`, `"rps >= 0.95 * baseline.speed"`), "thresholds[0]"},
		{"bad compare_to type", withCompareTo(`7`, `"rps > 1"`), "compare_to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, p, _ := env.post(t, nil, tt.body)
			if status != http.StatusUnprocessableEntity || p.Field != tt.field || p.Type != problemBase+"validation" {
				t.Errorf("POST = %d %+v, want 422 validation naming %s", status, p, tt.field)
			}
			if p.Detail != "" && strings.Contains(p.Detail, "bob") {
				t.Errorf("problem %q leaks the other owner", p.Detail)
			}
		})
	}
	if got := env.jobCount(t); got != 2 {
		t.Errorf("jobs stored = %d, want 2 (none created by a refused POST)", got)
	}
}

func TestResultsJudgeAgainstBaselineJob(t *testing.T) {
	env, _ := miniEnv(t)
	ctx := t.Context()
	_, base, _, _ := env.post(t, nil, validSpec) // a at c = 1, 4 × 200 requests
	env.succeed(t, base.ID)
	body := `{"targets":[{"name":"a","url":"http://127.0.0.1:9000/"}],"sweep":{"concurrency":[1,4],"requests":[200]},
	 "compare_to":{"labels":{"branch":"main"}},"thresholds":["rps >= 0.95 * baseline.rps"]}`
	status, cur, p, _ := env.post(t, nil, body)
	if status != http.StatusAccepted {
		t.Fatalf("POST = %d %+v", status, p)
	}
	save := func(id string, point int, rps float64) {
		r := &job.Run{RunKey: job.RunKey{Point: point}, Target: "a", Result: &abreport.Report{RequestsPerSecond: rps, CompleteRequests: 200}}
		if _, err := env.st.SaveRun(ctx, id, r); err != nil {
			t.Fatal(err)
		}
	}
	save(base.ID, 0, 1000)
	save(base.ID, 1, 1000)
	save(cur.ID, 0, 900) // regressed by 10 %
	save(cur.ID, 1, 990)

	a := env.results(t, cur.ID)
	v := a.Verdict
	if v.Result != job.VerdictFail || len(v.Failures) != 1 {
		t.Fatalf("verdict = %+v, want fail with one cell", v)
	}
	f := v.Failures[0]
	if f.Concurrency != 1 || f.Requests != 200 || f.Value != 900 || f.Baseline == nil || *f.Baseline != 1000 ||
		f.Bound == nil || *f.Bound != 950 || f.BaselineJob != base.ID {
		t.Errorf("failure = %+v, want c = 1 × 200: 900 against 1000 with bound 950 from %s", f, base.ID)
	}
	if a.CompareTo == nil || a.CompareTo.JobID != base.ID || len(a.CompareTo.Cells) != 2 {
		t.Errorf("compare_to = %+v, want 2 cells against %s", a.CompareTo, base.ID)
	}

	// The baseline job expires: the gate fails, saying so.
	keys, _ := env.rdb.Keys(ctx, "benchq:job:{"+base.ID+"}*").Result()
	env.rdb.Del(ctx, keys...)
	v = env.results(t, cur.ID).Verdict
	if v.Result != job.VerdictFail || len(v.Failures) != 1 || !strings.Contains(v.Failures[0].Reason, "no longer exists") {
		t.Errorf("verdict with the baseline gone = %+v, want one failure saying it no longer exists", v)
	}
}

func (e *storeEnv) results(t *testing.T, id string) job.Analysis {
	t.Helper()
	resp, err := http.Get(e.url + "/v1/jobs/" + id + "/results")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r ResultsResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET results = %d, %v", resp.StatusCode, err)
	}
	return r.Analysis
}
