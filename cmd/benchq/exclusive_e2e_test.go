package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/testservers"
)

// exclusiveJob is what the exclusivity test reads of a job and its runs.
type exclusiveJob struct {
	ID           string     `json:"id"`
	Status       string     `json:"status"`
	Error        string     `json:"error"`
	QueuedReason string     `json:"queued_reason"`
	StartedAt    *time.Time `json:"started_at"`
	FinishedAt   *time.Time `json:"finished_at"`
}

// TestExclusiveTargetsEndToEnd runs `benchq serve` and two `benchq
// worker` processes on a real redis-server, and submits two jobs on one
// target host together, twice. Exclusive (the default), one waits queued
// with the reason while the other loads the host, then runs: the target's
// own timestamps and the runs' started_at/finished_at do not overlap.
// With "exclusive": false both load the target at once.
func TestExclusiveTargetsEndToEnd(t *testing.T) {
	rs := redistest.Start(t)
	se := startServe(t, rs.URL())
	base := se.base
	workers := []*process{startProcess(t, se.bin, se.env, "worker"), startProcess(t, se.bin, se.env, "worker")}
	tg := testservers.StartSpanTarget(t, time.Millisecond)
	host := strings.TrimSuffix(strings.TrimPrefix(tg.URL, "http://"), "/")

	for _, tt := range []struct {
		name      string
		exclusive *bool // nil: the default
	}{
		{"exclusive by default", nil},
		{"exclusive false", new(bool)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			load := func(name string) map[string]any {
				spec := map[string]any{
					"name":    name,
					"targets": []map[string]any{{"name": "t", "url": tg.URL}},
					"request": map[string]any{"headers": map[string]string{testservers.SpanHeader: tt.name + "/" + name}},
					"sweep":   map[string]any{"concurrency": []int{2}, "duration": []string{"1s"}},
				}
				if tt.exclusive != nil {
					spec["exclusive"] = *tt.exclusive
				}
				return spec
			}
			a, b := submit(t, base, load("a")), submit(t, base, load("b"))
			wantExclusive := tt.exclusive == nil
			var reason string
			deadline := time.Now().Add(60 * time.Second)
			for {
				ja, jb := getExclusiveJob(t, base, a.ID), getExclusiveJob(t, base, b.ID)
				for _, j := range []exclusiveJob{ja, jb} {
					if j.Status == "queued" && j.QueuedReason != "" && reason == "" {
						reason = j.QueuedReason
						t.Logf("GET /v1/jobs/%s while the other job ran: status %s, queued_reason %q", j.ID, j.Status, j.QueuedReason)
					}
				}
				if done(ja) && done(jb) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("jobs still %s and %s after 60s", ja.Status, jb.Status)
				}
				time.Sleep(50 * time.Millisecond)
			}
			ja, jb := getExclusiveJob(t, base, a.ID), getExclusiveJob(t, base, b.ID)
			for _, j := range []exclusiveJob{ja, jb} {
				if j.Status != "succeeded" {
					t.Fatalf("job %s ended %s (%s), want succeeded", j.ID, j.Status, j.Error)
				}
			}
			ra, rb := exclusiveRuns(t, base, a.ID), exclusiveRuns(t, base, b.ID)
			sa, sb := tg.Span(tt.name+"/a"), tg.Span(tt.name+"/b")
			t.Logf("target: a %s .. %s (%d requests), b %s .. %s (%d requests)",
				sa.First.Format(time.StampMilli), sa.Last.Format(time.StampMilli), sa.Requests,
				sb.First.Format(time.StampMilli), sb.Last.Format(time.StampMilli), sb.Requests)
			t.Logf("runs: a %s .. %s, b %s .. %s; jobs: a %s .. %s, b %s .. %s",
				ra.StartedAt.Format(time.StampMilli), ra.FinishedAt.Format(time.StampMilli),
				rb.StartedAt.Format(time.StampMilli), rb.FinishedAt.Format(time.StampMilli),
				ja.StartedAt.Format(time.StampMilli), ja.FinishedAt.Format(time.StampMilli),
				jb.StartedAt.Format(time.StampMilli), jb.FinishedAt.Format(time.StampMilli))
			runsOverlap := ra.StartedAt.Before(rb.FinishedAt) && rb.StartedAt.Before(ra.FinishedAt)
			jobsOverlap := ja.StartedAt.Before(*jb.FinishedAt) && jb.StartedAt.Before(*ja.FinishedAt)
			if sa.Overlaps(sb) == wantExclusive || runsOverlap == wantExclusive || jobsOverlap == wantExclusive {
				t.Errorf("overlap seen by the target %v, of the runs %v, of the jobs %v; want %v",
					sa.Overlaps(sb), runsOverlap, jobsOverlap, !wantExclusive)
			}
			switch {
			case wantExclusive && !strings.HasPrefix(reason, "waiting for target "+host+", held by job "):
				t.Errorf("queued_reason seen = %q, want it to name target %s and the job holding it", reason, host)
			case !wantExclusive && reason != "":
				t.Errorf("queued_reason %q on a job that is not exclusive", reason)
			}
		})
	}
	for _, p := range append(workers, se.api) {
		p.Stop(t)
	}
}

func done(j exclusiveJob) bool {
	return j.Status == "succeeded" || j.Status == "failed" || j.Status == "canceled"
}

func getExclusiveJob(t *testing.T, base, id string) exclusiveJob {
	t.Helper()
	resp, b := call(t, http.MethodGet, base+"/v1/jobs/"+id, nil)
	var j exclusiveJob
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &j) != nil {
		t.Fatalf("GET /v1/jobs/%s = %d %s", id, resp.StatusCode, b)
	}
	return j
}

func exclusiveRuns(t *testing.T, base, id string) job.Run {
	t.Helper()
	runs := results(t, base, id)
	if len(runs) != 1 {
		t.Fatalf("job %s has %d runs stored, want one: %+v", id, len(runs), runs)
	}
	return runs[0]
}
