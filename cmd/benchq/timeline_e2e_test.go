package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/jobtest"
	"github.com/benchq/benchq/internal/testservers"
)

// servedInterval is what the timeline test reads of an interval, in every
// format the service gives it.
type servedInterval struct {
	TS        float64 `json:"t_s"`
	Requests  int64   `json:"requests"`
	Succeeded int64   `json:"succeeded"`
	Failed    int64   `json:"failed"`
	Non2xx    int64   `json:"non_2xx"`
	Bytes     int64   `json:"bytes"`
	P50Ms     float64 `json:"p50_ms"`
	P90Ms     float64 `json:"p90_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
}

type timelineRun struct {
	Result struct {
		CompleteRequests      int64 `json:"complete_requests"`
		FailedRequests        int64 `json:"failed_requests"`
		Non2xxResponses       int64 `json:"non_2xx_responses"`
		TotalTransferredBytes int64 `json:"total_transferred_bytes"`
	} `json:"result"`
	Timeline *struct {
		IntervalS float64          `json:"interval_s"`
		Intervals []servedInterval `json:"intervals"`
	} `json:"timeline"`
}

// TestTimelineServed runs a 6 s job against a target that answers in 1 ms,
// then 20 ms from 2 s to 4 s, then 1 ms again, on the all-in-one service
// (its redis-server child) with 500 ms intervals, and reads the run's
// timeline every way the service gives it: results?timeline=true shows the
// slow intervals where the schedule put them (4..7, ± 1) and intervals
// that add up to the run's requests, failures, non-2xx and bytes exactly;
// timeline-csv and timeline-ndjson parse back to the same numbers; the
// run's hgrm holds as many requests as the run; `benchq results
// --timeline` prints the same timeline.
func TestTimelineServed(t *testing.T) {
	if testing.Short() {
		t.Skip("a 6 s run")
	}
	dir := t.TempDir() // a data directory: the all-in-one runs a redis-server child
	m := startMain(t, func(c *config.Config) { c.DataDir = dir })
	if m.redis.child == nil {
		t.Fatal("the all-in-one did not start its redis-server child")
	}
	tg := testservers.StartSlowStretch(t)
	tg.BeginAtFirstRequest()
	j := submit(t, m.URL(), map[string]any{
		"targets":  []map[string]string{{"url": tg.URL + "/"}},
		"sweep":    map[string]any{"concurrency": []int{4}, "duration": []string{"6s"}},
		"timeline": map[string]string{"interval": "500ms"},
	})
	if got := waitJob(t, m.URL(), j.ID, 90*time.Second); got.Status != "succeeded" {
		t.Fatalf("job ended %s (%s), want succeeded", got.Status, got.Error)
	}
	jobURL := m.URL() + "/v1/jobs/" + j.ID

	resp, body := call(t, http.MethodGet, jobURL+"/results?timeline=true", nil)
	var res struct {
		Runs []timelineRun `json:"runs"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &res) != nil || len(res.Runs) != 1 || res.Runs[0].Timeline == nil {
		t.Fatalf("GET results?timeline=true = %d %.500s; want one run with a timeline", resp.StatusCode, body)
	}
	stored := res.Runs[0]
	ivs := stored.Timeline.Intervals
	if stored.Timeline.IntervalS != 0.5 || len(ivs) < 12 {
		t.Fatalf("timeline: %d intervals of %v s, want 12 or more of 0.5 s", len(ivs), stored.Timeline.IntervalS)
	}
	var sum servedInterval
	p50s := make([]float64, len(ivs))
	for i, iv := range ivs {
		sum.Requests += iv.Requests
		sum.Failed += iv.Failed
		sum.Non2xx += iv.Non2xx
		sum.Bytes += iv.Bytes
		p50s[i] = iv.P50Ms
	}
	r := stored.Result
	if sum.Requests != r.CompleteRequests || sum.Failed != r.FailedRequests || sum.Non2xx != r.Non2xxResponses || sum.Bytes != r.TotalTransferredBytes {
		t.Errorf("intervals sum to %d requests, %d failed, %d non-2xx, %d bytes; the run has %d, %d, %d, %d",
			sum.Requests, sum.Failed, sum.Non2xx, sum.Bytes, r.CompleteRequests, r.FailedRequests, r.Non2xxResponses, r.TotalTransferredBytes)
	}
	t.Logf("%d requests over %d intervals, p50 per interval (ms): %v", sum.Requests, len(ivs), p50s)
	// The 2 s at 20 ms are intervals 4..7 of 0.5 s (± 1).
	jobtest.CheckSlowIntervals(t, p50s, 4, 7)

	// The same intervals as NDJSON and CSV.
	resp, body = call(t, http.MethodGet, jobURL+"/report?format=timeline-ndjson", nil)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("timeline-ndjson = %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var fromNDJSON []servedInterval
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		var iv servedInterval
		if err := json.Unmarshal(sc.Bytes(), &iv); err != nil {
			t.Fatalf("timeline-ndjson line %q: %v", sc.Text(), err)
		}
		fromNDJSON = append(fromNDJSON, iv)
	}
	sameIntervals(t, "timeline-ndjson", fromNDJSON, ivs)
	resp, body = call(t, http.MethodGet, jobURL+"/report?format=timeline-csv", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("timeline-csv = %d %s", resp.StatusCode, body)
	}
	sameIntervals(t, "timeline-csv", csvIntervals(t, body), ivs)

	// The run's latency distribution, through the CLI into a file.
	path := filepath.Join(t.TempDir(), "run.hgrm")
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"report", j.ID, "--run", "0:0", "--out", path, "--server", m.URL()}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("benchq report --run 0:0 --out run.hgrm = exit %d: %s", code, stderr.String())
	}
	hgrm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	total := regexp.MustCompile(`(?m)^#\[Max     = +([0-9.]+), Total count    = +(\d+)\]$`).FindSubmatch(hgrm)
	if total == nil || string(total[2]) != strconv.FormatInt(r.CompleteRequests, 10) {
		t.Fatalf("hgrm's Total count = %q, want the run's %d:\n%s", total, r.CompleteRequests, hgrm)
	}
	plotted := 0
	for line := range strings.Lines(string(hgrm)) {
		f := strings.Fields(line)
		if len(f) == 4 && line[0] != '#' {
			if _, err := strconv.ParseFloat(f[3], 64); err == nil {
				plotted++
			}
		}
	}
	if maxMs, _ := strconv.ParseFloat(string(total[1]), 64); plotted < 20 || maxMs < 20 {
		t.Errorf("hgrm has %d lines for the plotter, max %v ms; want a distribution reaching the 20 ms step", plotted, maxMs)
	}

	// benchq results --timeline prints the server's JSON with the timeline.
	stdout.Reset()
	if code := run(t.Context(), []string{"results", j.ID, "--timeline", "--server", m.URL()}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("benchq results --timeline = exit %d: %s", code, stderr.String())
	}
	var cli struct {
		Runs []timelineRun `json:"runs"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &cli); err != nil || len(cli.Runs) != 1 || cli.Runs[0].Timeline == nil {
		t.Fatalf("benchq results --timeline printed %.300s (%v); want the run with its timeline", stdout.String(), err)
	}
	sameIntervals(t, "benchq results --timeline", cli.Runs[0].Timeline.Intervals, ivs)
}

// sameIntervals compares intervals read from a format with the results'.
func sameIntervals(t *testing.T, format string, got, want []servedInterval) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s has %d intervals, the results %d", format, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s interval %d = %+v, the results say %+v", format, i, got[i], want[i])
		}
	}
}

// csvIntervals reads the timeline-csv report's rows by column name.
func csvIntervals(t *testing.T, body []byte) []servedInterval {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("timeline-csv: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	num := func(row []string, name string) float64 {
		i, ok := col[name]
		if !ok {
			t.Fatalf("timeline-csv has no column %s: %q", name, rows[0])
		}
		v, err := strconv.ParseFloat(row[i], 64)
		if err != nil {
			t.Fatalf("timeline-csv %s = %q: %v", name, row[i], err)
		}
		return v
	}
	var out []servedInterval
	for _, row := range rows[1:] {
		if row[col["target"]] == "" || row[col["repeat"]] != "0" {
			t.Errorf("timeline-csv row %q does not name run 0:0", row[:5])
		}
		out = append(out, servedInterval{
			TS: num(row, "t_s"), Requests: int64(num(row, "requests")), Succeeded: int64(num(row, "succeeded")),
			Failed: int64(num(row, "failed")), Non2xx: int64(num(row, "non_2xx")), Bytes: int64(num(row, "bytes")),
			P50Ms: num(row, "p50_ms"), P90Ms: num(row, "p90_ms"), P99Ms: num(row, "p99_ms"), MaxMs: num(row, "max_ms"),
		})
	}
	return out
}
