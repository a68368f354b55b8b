package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
)

// seedTimelineJob stores seedFinishedJob's job with its first run's
// measurement carrying a timeline of two 500 ms intervals (3 requests at
// 1 ms, then 2 at 20 ms, one of them a 503), and its second run's stored
// measurement corrupt.
func seedTimelineJob(t *testing.T, env *testEnv) string {
	t.Helper()
	id := seedFinishedJob(env)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := &measure.Measurement{Concurrency: 1, Started: start, Elapsed: time.Second, Total: measure.NewPhase(),
		StatusCodes: map[int]int64{200: 4, 503: 1}, Non2xx: 1,
		Timeline: &measure.Timeline{Start: start, Interval: 500 * time.Millisecond, Intervals: make([]measure.Interval, 2)}}
	for i, us := range []int64{1000, 1000, 1000, 20000, 20000} {
		iv := &m.Timeline.Intervals[i/3]
		h := iv.Latency.Histogram()
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
		iv.Latency.Set(h)
		iv.Latency.Count++
		iv.Latency.Max = max(iv.Latency.Max, us)
		iv.Requests++
		iv.Succeeded++
		iv.Bytes += 150
		m.Total.Record(us)
		m.Complete++
		m.TotalReceivedBytes += 150
	}
	m.Timeline.Intervals[1].Succeeded--
	m.Timeline.Intervals[1].Non2xx++
	runs := env.store.runs[id]
	r, err := job.NewRun(runs[0].RunKey, runs[0].Target, 1, start, start.Add(time.Second), m, abreport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs[0] = *r
	runs[1].Measurement = json.RawMessage(`{"v":1,"timeline":"not a timeline"}`)
	return id
}

type timelineResults struct {
	Runs []struct {
		Point    int             `json:"point"`
		Repeat   int             `json:"repeat"`
		Timeline json.RawMessage `json:"timeline"`
	} `json:"runs"`
}

// TestResultsTimeline: ?timeline=true adds a run's intervals as stored;
// without it no run has a timeline and no measurement is decoded (the
// corrupt one does not fail the page); with it a corrupt measurement is a
// 500 problem that does not show the stored bytes.
func TestResultsTimeline(t *testing.T) {
	env := newTestEnv(t, nil)
	id := seedTimelineJob(t, env)

	resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+id+"/results", "")
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"timeline"`) {
		t.Errorf("GET results = %d, timeline shown: %v; want 200 without a timeline", resp.StatusCode, strings.Contains(string(body), `"timeline"`))
	}
	resp, body = env.do(t, http.MethodGet, "/v1/jobs/"+id+"/results?timeline=false", "")
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"timeline"`) {
		t.Errorf("GET results?timeline=false = %d, timeline shown: %v; want 200 without a timeline", resp.StatusCode, strings.Contains(string(body), `"timeline"`))
	}

	resp, body = env.do(t, http.MethodGet, "/v1/jobs/"+id+"/results?timeline=true", "")
	if p := problem(t, resp, body); resp.StatusCode != http.StatusInternalServerError || strings.Contains(string(body), "not a timeline") {
		t.Errorf("GET results?timeline=true over a corrupt measurement = %d %+v, want 500 not echoing it", resp.StatusCode, p)
	}
	env.store.runs[id][1].Measurement = nil // stored without one: no timeline, no error
	resp, body = env.do(t, http.MethodGet, "/v1/jobs/"+id+"/results?timeline=true", "")
	var got timelineResults
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || len(got.Runs) != 8 {
		t.Fatalf("GET results?timeline=true = %d %s", resp.StatusCode, body)
	}
	var tl struct {
		IntervalS float64                  `json:"interval_s"`
		Intervals []abreport.TimelinePoint `json:"intervals"`
	}
	if err := json.Unmarshal(got.Runs[0].Timeline, &tl); err != nil {
		t.Fatalf("run 0's timeline %s: %v", got.Runs[0].Timeline, err)
	}
	if tl.IntervalS != 0.5 || len(tl.Intervals) != 2 {
		t.Fatalf("timeline = %+v, want 2 intervals of 0.5 s", tl)
	}
	a, b := tl.Intervals[0], tl.Intervals[1]
	if a.TS != 0 || a.Requests != 3 || a.Succeeded != 3 || a.Bytes != 450 || a.P50Ms != 1 || a.MaxMs != 1 ||
		b.TS != 0.5 || b.Requests != 2 || b.Succeeded != 1 || b.Non2xx != 1 || b.P99Ms < 19 || b.MaxMs != 20 {
		t.Errorf("intervals = %+v, %+v; want 3 at 1 ms, then 2 at 20 ms with one non-2xx", a, b)
	}
	for _, r := range got.Runs[1:] {
		if r.Timeline != nil {
			t.Errorf("run %d:%d, stored without a measurement, has timeline %s", r.Point, r.Repeat, r.Timeline)
		}
	}
}

// TestResultsTimelineBadValue: a timeline that is not a boolean is a 400
// problem naming the parameter and the value.
func TestResultsTimelineBadValue(t *testing.T) {
	env := newTestEnv(t, nil)
	id := seedFinishedJob(env)
	for _, v := range []string{"yes", "2", "tru"} {
		resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+id+"/results?timeline="+v, "")
		if p := problem(t, resp, body); resp.StatusCode != http.StatusBadRequest || p.Field != "timeline" || !strings.Contains(p.Detail, v) {
			t.Errorf("GET results?timeline=%s = %d %+v, want 400 naming timeline and the value", v, resp.StatusCode, p)
		}
	}
}

// TestReportRun: &run=POINT:REPEAT narrows hgrm and the timeline formats
// to one run; a malformed, unknown or misplaced run is a 400 naming it.
func TestReportRun(t *testing.T) {
	env := newTestEnv(t, nil)
	id := seedTimelineJob(t, env)
	env.store.runs[id][1].Measurement = nil

	resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+id+"/report?format=hgrm&run=0:0", "")
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), "#[run ") != 1 || !strings.Contains(string(body), "#[run 0:0: target a, c=1, n=10, repeat 1/2]") ||
		!strings.Contains(string(body), "Total count    =            5]") {
		t.Errorf("GET report?format=hgrm&run=0:0 = %d\n%s\nwant run 0:0 alone, 5 requests", resp.StatusCode, body)
	}
	if d := resp.Header.Get("Content-Disposition"); d != `inline; filename="`+id+`.hgrm"` {
		t.Errorf("Content-Disposition = %q", d)
	}
	resp, body = env.do(t, http.MethodGet, "/v1/jobs/"+id+"/report?format=hgrm", "")
	if resp.StatusCode != http.StatusOK || strings.Count(string(body), "#[run ") != 8 {
		t.Errorf("GET report?format=hgrm = %d with %d runs, want all 8", resp.StatusCode, strings.Count(string(body), "#[run "))
	}
	resp, body = env.do(t, http.MethodGet, "/v1/jobs/"+id+"/report?format=timeline-ndjson&run=0:0", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" || strings.Count(string(body), "\n") != 2 {
		t.Errorf("GET report?format=timeline-ndjson&run=0:0 = %d %q:\n%s\nwant 2 lines", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	for _, q := range []string{"format=hgrm&run=0", "format=hgrm&run=a:b", "format=hgrm&run=-1:0", "format=hgrm&run=3:7", "format=csv&run=0:0"} {
		resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+id+"/report?"+q, "")
		if p := problem(t, resp, body); resp.StatusCode != http.StatusBadRequest || p.Field != "run" {
			t.Errorf("GET report?%s = %d %+v, want 400 naming run", q, resp.StatusCode, p)
		}
	}
}
