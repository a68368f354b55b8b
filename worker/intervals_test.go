package worker_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
)

// TestRunIntervalsOnStream runs two 3-second runs with 250 ms intervals
// through a Worker: each run's intervals reach the job's stream while it
// runs, coalesced (at most one event a second, not four), in order, each
// once, before the run's run.finished; together they are the stored
// run's timeline, and the stream still ends with job.finished.
func TestRunIntervalsOnStream(t *testing.T) {
	e := newEnv(t)
	tg := testservers.StartTarget(t, "hello benchq", time.Millisecond)
	spec := job.Spec{
		Targets:  []job.Target{{Name: "a", URL: tg.URL}},
		Sweep:    job.Sweep{Concurrency: []int{2}, Duration: []job.Duration{job.Duration(3 * time.Second)}, Repeats: 2},
		Timeline: &job.Timeline{Interval: job.Duration(250 * time.Millisecond)},
	}
	j, task := e.create(t, spec)
	e.enqueue(t, task)
	e.startWorker(t)
	if got := e.waitJob(t, j.ID, 60*time.Second, "a terminal status", terminal); got.Status != job.StatusSucceeded {
		t.Fatalf("job status = %s (%s), want succeeded", got.Status, got.Error)
	}
	assertEventsEnd(t, e.st, j.ID, job.StatusSucceeded, 2)

	events, err := e.st.ReadEvents(t.Context(), j.ID, "0", 0)
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		events   int
		first    time.Time
		points   []abreport.TimelinePoint
		finished time.Time
	}
	runs := map[job.RunKey]*seen{}
	get := func(k job.RunKey) *seen {
		if runs[k] == nil {
			runs[k] = &seen{}
		}
		return runs[k]
	}
	for _, ev := range events {
		switch ev.Type {
		case job.EventRunIntervals:
			var d struct {
				job.RunKey
				Target    string                   `json:"target"`
				Intervals []abreport.TimelinePoint `json:"intervals"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil || d.Target != "a" || len(d.Intervals) == 0 {
				t.Fatalf("run.intervals data %s: %v; want target a and intervals", ev.Data, err)
			}
			s := get(d.RunKey)
			if !s.finished.IsZero() {
				t.Errorf("run %v: a run.intervals event after its run.finished", d.RunKey)
			}
			if s.events++; s.events == 1 {
				s.first = ev.Time
			}
			s.points = append(s.points, d.Intervals...)
		case job.EventRunFinished:
			var k job.RunKey
			if err := json.Unmarshal(ev.Data, &k); err != nil {
				t.Fatal(err)
			}
			get(k).finished = ev.Time
		}
	}
	stored, err := e.st.Runs(t.Context(), j.ID)
	if err != nil || len(stored) != 2 {
		t.Fatalf("Runs = %d, %v; want 2", len(stored), err)
	}
	for _, r := range stored {
		m, err := r.DecodeMeasurement()
		if err != nil {
			t.Fatal(err)
		}
		want := abreport.Timeline(m.Timeline, false)
		s := get(r.RunKey)
		if len(s.points) != len(want) {
			t.Fatalf("run %v: %d intervals on the stream, %d stored", r.RunKey, len(s.points), len(want))
		}
		var requests int64
		for i, p := range s.points {
			if p.TS != want[i].TS || p.Requests != want[i].Requests || p.Failed != want[i].Failed || p.P99Ms != want[i].P99Ms {
				t.Errorf("run %v interval %d: streamed %+v, stored %+v", r.RunKey, i, p, want[i])
			}
			requests += p.Requests
		}
		if requests != r.Result.CompleteRequests {
			t.Errorf("run %v: streamed intervals hold %d requests, the run %d", r.RunKey, requests, r.Result.CompleteRequests)
		}
		// 12+ intervals of 250 ms in a 3 s run: coalesced to about one
		// event a second, the run's end sending the rest.
		if s.events < 2 || s.events > 5 {
			t.Errorf("run %v: %d run.intervals events for %d intervals, want 2..5", r.RunKey, s.events, len(s.points))
		}
		if lead := s.finished.Sub(s.first); lead < time.Second {
			t.Errorf("run %v: the first intervals came %v before run.finished, want them while it ran", r.RunKey, lead)
		}
		t.Logf("run %v: %d intervals in %d events, the first %v before run.finished", r.RunKey, len(s.points), s.events, s.finished.Sub(s.first))
	}
}
