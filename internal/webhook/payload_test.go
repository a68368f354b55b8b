package webhook

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
)

func finishedJob() *job.Job {
	created := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	started, finished := created.Add(time.Second), created.Add(time.Minute)
	return &job.Job{
		ID: "01JC3W9Q5V1ZK2M4N6P8R0T2V4", Status: job.StatusSucceeded, Verdict: "fail",
		Spec: job.Spec{Name: "nightly", Labels: map[string]string{"branch": "main"}, Baseline: "a",
			Webhook: &job.Webhook{URL: "http://127.0.0.1:9/h"}},
		CreatedAt: created, StartedAt: &started, FinishedAt: &finished,
		Progress: job.Progress{RunsDone: 4, RunsTotal: 4},
	}
}

// analysis has n points, each with numbers, and one threshold failure.
func analysis(n int) *job.Analysis {
	a := &job.Analysis{Verdict: job.VerdictResult{Result: "fail",
		Failures: []job.ThresholdFailure{{Threshold: "rps >= 1000", Target: "b", Concurrency: 4, Value: 812.5}}}}
	for i := range n {
		a.Points = append(a.Points, job.PointSummary{
			Point: job.Point{Index: i, Target: fmt.Sprintf("target-%d", i), Concurrency: 1 << (i % 10), Requests: 1000},
			Runs:  3, RPS: job.Stat{N: 3, Mean: 1234.5, CV: 0.04},
			PercentilesMs: map[string]job.Stat{"50": {N: 3, Mean: 1.5}, "99": {N: 3, Mean: 9.25}},
			FailedRatio:   job.Stat{N: 3, Mean: 0.01},
		})
	}
	return a
}

func TestNewPayload(t *testing.T) {
	j := finishedJob()
	now := time.Date(2030, 1, 2, 3, 5, 6, 0, time.UTC)
	b, err := Encode(NewPayload(job.EventFor(j.Status), j, analysis(2), "http://benchq.test:8080/", now))
	if err != nil {
		t.Fatal(err)
	}
	var got Payload
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"job_id":`, `"runs_done":4`, `"runs_total":4`, `"mean_rps":`, `"p99_ms":`, `"created_at":`, `"finished_at":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("payload lacks %s: %s", key, b)
		}
	}
	d := got.Data
	if got.Type != "job.succeeded" || !got.Timestamp.Equal(now) || d.JobID != j.ID || d.Status != job.StatusSucceeded ||
		d.Verdict != "fail" || d.Name != "nightly" || d.Labels["branch"] != "main" || d.RunsDone != 4 || d.RunsTotal != 4 || d.Baseline != "a" {
		t.Errorf("payload = %s", b)
	}
	if len(d.Failures) != 1 || d.Failures[0].Target != "b" {
		t.Errorf("failures = %+v, want the verdict's one failure", d.Failures)
	}
	if len(d.Points) != 2 || num(d.Points[1].MeanRPS) != 1234.5 || num(d.Points[1].P99Ms) != 9.25 || num(d.Points[1].P50Ms) != 1.5 || d.Points[1].CV != 0.04 || d.AggregatesOmitted {
		t.Errorf("points = %+v (omitted %v), want 2 with their means", d.Points, d.AggregatesOmitted)
	}
	want := Links{Self: "http://benchq.test:8080/v1/jobs/" + j.ID, Results: "http://benchq.test:8080/v1/jobs/" + j.ID + "/results",
		Report: "http://benchq.test:8080/v1/jobs/" + j.ID + "/report"}
	if d.Links != want {
		t.Errorf("links = %+v, want %+v", d.Links, want)
	}
}

// num reads a nullable number, -1 for null.
func num(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestPayloadNullWhereNothingMeasured: a point canceled before it ran, and
// one whose runs completed no request, carry null means, not a 0 that a
// receiver would read as a measurement.
func TestPayloadNullWhereNothingMeasured(t *testing.T) {
	a := &job.Analysis{Points: []job.PointSummary{
		{Point: job.Point{Index: 0, Target: "never-ran", Concurrency: 1, Requests: 10}},
		{Point: job.Point{Index: 1, Target: "all-failed", Concurrency: 1, Requests: 10}, Runs: 2,
			RPS: job.Stat{N: 2}, FailedRatio: job.Stat{N: 2, Mean: 1}, PercentilesMs: map[string]job.Stat{"50": {}, "99": {}}},
	}}
	b, err := Encode(NewPayload(job.EventSucceeded, finishedJob(), a, "", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"target":"never-ran","concurrency":1,"requests":10,"runs":0,"mean_rps":null,"p50_ms":null,"p99_ms":null,"failed_ratio":null`,
		`"target":"all-failed","concurrency":1,"requests":10,"runs":2,"mean_rps":0,"p50_ms":null,"p99_ms":null,"failed_ratio":1`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("payload lacks %s:\n%s", want, b)
		}
	}
}

func TestEncodeCapsPayloadSize(t *testing.T) {
	j := finishedJob()
	b, err := Encode(NewPayload(job.EventSucceeded, j, analysis(500), "", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxPayloadBytes {
		t.Fatalf("Encode = %d bytes, want at most %d", len(b), MaxPayloadBytes)
	}
	var p Payload
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if !p.Data.AggregatesOmitted || len(p.Data.Points) != 0 {
		t.Errorf("500 points: aggregates_omitted = %v with %d points, want true and none", p.Data.AggregatesOmitted, len(p.Data.Points))
	}
	if len(p.Data.Failures) != 1 || p.Data.FailuresOmitted {
		t.Errorf("failures = %d (omitted %v), want kept: they fit once the points are gone", len(p.Data.Failures), p.Data.FailuresOmitted)
	}
	if p.Data.Links.Self != "/v1/jobs/"+j.ID {
		t.Errorf("relative self link = %q", p.Data.Links.Self)
	}

	// Thousands of failing cells go too, flagged.
	a := analysis(0)
	for i := range 2000 {
		a.Verdict.Failures = append(a.Verdict.Failures, job.ThresholdFailure{Threshold: "rps >= 1000", Target: "t", Point: i, Value: 1})
	}
	b, err = Encode(NewPayload(job.EventSucceeded, j, a, "", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &p); err != nil || len(b) > MaxPayloadBytes || !p.Data.FailuresOmitted {
		t.Errorf("2000 failures: %d bytes, failures_omitted %v, err %v", len(b), p.Data.FailuresOmitted, err)
	}

	// A small job keeps everything.
	b, _ = Encode(NewPayload(job.EventSucceeded, j, analysis(3), "", time.Now()))
	if strings.Contains(string(b), "omitted") {
		t.Errorf("3 points: %s, want nothing omitted", b)
	}
}

func TestEncodeTruncatesLongErrors(t *testing.T) {
	j := finishedJob()
	j.Status, j.Error = job.StatusFailed, strings.Repeat("é", 3000)
	b, err := Encode(NewPayload(job.EventFailed, j, nil, "", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	var p Payload
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if n := len(p.Data.Error); n > maxErrorLen+len("…") || !strings.HasSuffix(p.Data.Error, "…") || !json.Valid(b) {
		t.Errorf("error of %d bytes = %d bytes", len(j.Error), n)
	}
}

func TestSubscribed(t *testing.T) {
	j := finishedJob()
	tests := []struct {
		events []string
		event  string
		want   bool
	}{
		{nil, job.EventSucceeded, true}, // the default: every terminal event
		{nil, job.EventStarted, false},
		{[]string{job.EventStarted}, job.EventStarted, true},
		{[]string{job.EventFailed}, job.EventSucceeded, false},
	}
	for _, tt := range tests {
		j.Spec.Webhook.Events = tt.events
		if got := Subscribed(j, tt.event); got != tt.want {
			t.Errorf("Subscribed(events %v, %s) = %v, want %v", tt.events, tt.event, got, tt.want)
		}
	}
	j.Spec.Webhook = nil
	if Subscribed(j, job.EventSucceeded) {
		t.Error("Subscribed without a webhook = true")
	}
}

func TestNewPayloadCarriesCompareTo(t *testing.T) {
	a := analysis(2)
	a.CompareTo = &job.BaselineComparison{JobID: "01JBASE0000000000000000000", Cells: []job.BaselineCell{
		{Point: job.Point{Index: 1}, BaselinePoint: 1, Comparison: &job.Comparison{Baseline: "01JBASE0000000000000000000", RPSPct: -7.5, RPS: "-7.50 %"}},
	}}
	p := NewPayload(job.EventSucceeded, finishedJob(), a, "", time.Now())
	if p.Data.CompareTo != "01JBASE0000000000000000000" || p.Data.Points[0].CompareTo != nil ||
		p.Data.Points[1].CompareTo == nil || p.Data.Points[1].CompareTo.RPSPct != -7.5 {
		t.Errorf("compare_to = %q, points %+v; want the baseline job on point 1 only", p.Data.CompareTo, p.Data.Points)
	}
}
