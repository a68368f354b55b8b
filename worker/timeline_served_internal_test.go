package worker

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/testservers"
)

// TestServedShardedTimelineIsShardsSum submits a timed job of three
// shards against a target slow (20 ms) from 2 s to 4 s of the run and
// fast (1 ms) around it, through the API, to three Workers on a real
// redis-server, and reads its timeline back through the API: each served
// interval's requests, successes, failures, non-2xx, bytes and latency
// count are the sum of the three shards' same interval (as each shard
// measured it, before it was stored) and its max their largest; the
// intervals add up to the run's result; the slow intervals are where the
// schedule put them; the timeline-csv report holds the same numbers.
func TestServedShardedTimelineIsShardsSum(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6 s sharded run")
	}
	e := newShardEnv(t)
	tg := testservers.StartSlowStretch(t)
	tg.BeginAtFirstRequest() // the shards start at the agreed instant
	e.startWorkers(t, 3, Config{JobLease: 2 * time.Second})
	c, base := e.apiClient(t)

	sub, err := c.Submit(t.Context(), client.Submission{Spec: []byte(`{"targets":[{"url":"` + tg.URL + `/"}],
		"sweep":{"concurrency":[6],"duration":["6s"],"shards":3},"timeline":{"interval":"500ms"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.wait(t, sub.Job.ID, 2*time.Minute); got.Status != "succeeded" {
		t.Fatalf("job = %s (%s), want succeeded", got.Status, got.Error)
	}
	res, err := c.Results(t.Context(), sub.Job.ID, client.ResultsOptions{Timeline: true})
	if err != nil || len(res.Runs) != 1 || res.Runs[0].Timeline == nil {
		t.Fatalf("results?timeline=true = %.500s, %v; want one run with a timeline", res.Raw, err)
	}
	run := res.Runs[0]
	served := run.Timeline.Intervals
	if run.Timeline.IntervalS != 0.5 || len(served) < 12 {
		t.Fatalf("served timeline: %d intervals of %v s, want 12 or more of 0.5 s", len(served), run.Timeline.IntervalS)
	}

	e.mu.Lock()
	var shards [][]abreport.TimelinePoint
	for i := range 3 {
		if len(e.shards[i]) != 1 || e.shards[i][0].Timeline == nil {
			e.mu.Unlock()
			t.Fatalf("shard %d: %d measurements, want one with a timeline", i, len(e.shards[i]))
		}
		shards = append(shards, abreport.Timeline(e.shards[i][0].Timeline, false))
	}
	e.mu.Unlock()
	var sum abreport.TimelinePoint
	p50s := make([]float64, len(served))
	for i, iv := range served {
		var want abreport.TimelinePoint
		for _, s := range shards {
			if i < len(s) {
				want.Requests += s[i].Requests
				want.Succeeded += s[i].Succeeded
				want.Failed += s[i].Failed
				want.Non2xx += s[i].Non2xx
				want.Bytes += s[i].Bytes
				want.LatencyN += s[i].LatencyN
				want.MaxMs = max(want.MaxMs, s[i].MaxMs)
			}
		}
		if iv.Requests != want.Requests || iv.Succeeded != want.Succeeded || iv.Failed != want.Failed || iv.Non2xx != want.Non2xx ||
			iv.Bytes != want.Bytes || iv.LatencyN != want.LatencyN || iv.MaxMs != want.MaxMs {
			t.Errorf("served interval %d = %+v; the shards' sum is %+v", i, iv, want)
		}
		sum.Requests += iv.Requests
		sum.Failed += iv.Failed
		sum.Non2xx += iv.Non2xx
		sum.Bytes += iv.Bytes
		p50s[i] = iv.P50Ms
	}
	r := run.Result
	if sum.Requests != r.CompleteRequests || sum.Failed != r.FailedRequests || sum.Non2xx != r.Non2xxResponses || sum.Bytes != r.TotalTransferredBytes {
		t.Errorf("intervals sum to %d requests, %d failed, %d non-2xx, %d bytes; the run has %d, %d, %d, %d",
			sum.Requests, sum.Failed, sum.Non2xx, sum.Bytes, r.CompleteRequests, r.FailedRequests, r.Non2xxResponses, r.TotalTransferredBytes)
	}
	t.Logf("%d requests over %d intervals, p50 per interval (ms): %v", sum.Requests, len(served), p50s)
	// A last interval the run's end cut short holds a few stragglers of
	// the shards' last requests, whose p50 says nothing of the target's
	// slow stretch: the check reads the full intervals.
	if n := len(served); n > 2 && served[n-1].Requests*2 < served[n-2].Requests {
		p50s = p50s[:n-1]
	}
	jobtest.CheckSlowIntervals(t, p50s, 4, 7)

	// The timeline-csv report: the same intervals, row for row.
	body, err := c.ReportWith(t.Context(), sub.Job.ID, client.ReportQuery{Format: "timeline-csv", Run: "0:0"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(body)
	body.Close()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) != len(served)+1 {
		t.Fatalf("timeline-csv: %d rows, %v; want a header and %d", len(rows), err, len(served))
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for i, row := range rows[1:] {
		iv := served[i]
		got, _ := json.Marshal([]string{row[col["requests"]], row[col["failed"]], row[col["non_2xx"]], row[col["bytes"]], row[col["p99_ms"]]})
		want, _ := json.Marshal([]string{strconv.FormatInt(iv.Requests, 10), strconv.FormatInt(iv.Failed, 10), strconv.FormatInt(iv.Non2xx, 10),
			strconv.FormatInt(iv.Bytes, 10), strconv.FormatFloat(iv.P99Ms, 'f', -1, 64)})
		if !bytes.Equal(got, want) {
			t.Errorf("timeline-csv row %d (requests, failed, non-2xx, bytes, p99) = %s, served %s", i, got, want)
		}
	}
	if resp, err := http.Get(base + "/v1/jobs/" + sub.Job.ID + "/results?timeline=maybe"); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("results?timeline=maybe = %v, %v; want 400", resp, err)
	} else {
		resp.Body.Close()
	}
}
