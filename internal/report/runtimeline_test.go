package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
)

// intervalSpec is one interval of a hand-made run: its latencies (µs),
// and how many of them answered non-2xx; failed requests on top.
type intervalSpec struct {
	latencies []int64
	non2xx    int64
	timeouts  int64
}

// timelineRun stores a run of point p measured as the intervals say, its
// measurement encoded as a worker stores it: totals, the total-time
// histogram and the timeline, all from the same requests.
func timelineRun(t *testing.T, p job.Point, repeat int, open bool, ivs []intervalSpec) job.Run {
	t.Helper()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m := &measure.Measurement{
		ServerHostname: "127.0.0.1", DocumentPath: "/", Concurrency: p.Concurrency, Started: start,
		Elapsed: time.Duration(len(ivs)) * time.Second, StatusCodes: map[int]int64{},
		Connect: measure.NewPhase(), Processing: measure.NewPhase(), Waiting: measure.NewPhase(), Total: measure.NewPhase(),
		Timeline: &measure.Timeline{Start: start, Interval: time.Second},
	}
	if open {
		m.Open = &measure.OpenModel{RequestedRate: 10, AchievedRate: 10, Uncorrected: measure.NewPhase()}
	}
	for _, s := range ivs {
		iv := measure.Interval{Non2xx: s.non2xx, Failures: measure.Failures{Timeout: s.timeouts}}
		h := measure.NewIntervalHistogram()
		for _, us := range s.latencies {
			m.Total.Record(us)
			if err := h.RecordValue(us); err != nil {
				t.Fatal(err)
			}
			iv.Requests++
			iv.Bytes += 100
			iv.Latency.Count++
			iv.Latency.Max = max(iv.Latency.Max, us)
		}
		iv.Latency.Set(h)
		iv.Succeeded = iv.Requests - s.non2xx
		if open {
			iv.Intended, iv.Started, iv.Late, iv.MaxSendLag = 10, iv.Requests, 1, 2500
		}
		m.Complete += iv.Requests
		m.Non2xx += iv.Non2xx
		m.Failures.Merge(iv.Failures)
		m.TotalReceivedBytes += iv.Bytes
		m.StatusCodes[200] += iv.Succeeded
		m.Timeline.Intervals = append(m.Timeline.Intervals, iv)
	}
	m.Failed = m.Failures.Total()
	if s := m.StatusCodes[200]; s < m.Complete {
		m.StatusCodes[503] = m.Complete - s
	}
	r, err := job.NewRun(job.RunKey{Point: p.Index, Repeat: repeat}, p.Target, p.Concurrency, start, start.Add(m.Elapsed), m, abreport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return *r
}

// timelineJob is the fixture job with two runs that carry timelines: point
// 0 repeat 1 in three intervals with a slow middle, and point 3 repeat 0
// in the open model, with failures.
func timelineJob(t *testing.T) (*job.Job, []job.Run) {
	j := fixtureJob()
	points := j.Spec.Points()
	slow := make([]int64, 50)
	for i := range slow {
		slow[i] = 20000 + int64(i)*10
	}
	runs := []job.Run{
		// Listed out of order: the formats order runs by point, then repeat.
		timelineRun(t, points[3], 0, true, []intervalSpec{{latencies: []int64{900, 1100}, timeouts: 2}, {latencies: []int64{1000}, non2xx: 1}}),
		timelineRun(t, points[0], 1, false, []intervalSpec{
			{latencies: []int64{1000, 1010, 1020, 990}},
			{latencies: slow, non2xx: 3},
			{latencies: []int64{1005, 995}},
		}),
		fixtureRuns(j)[0], // no measurement: no timeline, no rows
	}
	return j, runs
}

func renderTimeline(t *testing.T, f Format, j *job.Job, runs []job.Run) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f, j, runs, emptyAnalysis()); err != nil {
		t.Fatalf("Write(%s) = %v", f, err)
	}
	return buf.Bytes()
}

// wantTimelineRows is what both timeline formats must hold: every run's
// TimelineOf intervals, runs by point then repeat.
func wantTimelineRows(t *testing.T, runs []job.Run) []abreport.TimelinePoint {
	t.Helper()
	var want []abreport.TimelinePoint
	for _, i := range []int{1, 0} {
		tl, err := TimelineOf(&runs[i])
		if err != nil || tl == nil {
			t.Fatalf("TimelineOf(run %d) = %v, %v", i, tl, err)
		}
		want = append(want, tl.Intervals...)
	}
	return want
}

// TestTimelineNDJSON: one line per interval per run, each naming its run,
// and the lines parse back to the intervals TimelineOf gives, which add
// up to the runs' totals.
func TestTimelineNDJSON(t *testing.T) {
	j, runs := timelineJob(t)
	want := wantTimelineRows(t, runs)
	sc := bufio.NewScanner(bytes.NewReader(renderTimeline(t, FormatTimelineNDJSON, j, runs)))
	var got []timelineRow
	for sc.Scan() {
		var r timelineRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d (one per interval)", len(got), len(want))
	}
	for i, r := range got {
		if !equalPoints(r.TimelinePoint, want[i]) {
			t.Errorf("line %d = %+v, want %+v", i, r.TimelinePoint, want[i])
		}
	}
	first, last := got[0], got[len(got)-1]
	if first.Target != "apache" || first.Point != 0 || first.Repeat != 1 || first.Concurrency != 5 || first.Stop != "n=100" {
		t.Errorf("first line's run = %+v, want apache point 0 repeat 1 c=5 n=100", first)
	}
	if last.Point != 3 || last.Repeat != 0 || last.IntendedRS == nil || *last.IntendedRS != 10 || last.Failures != nil || last.Non2xx != 1 {
		t.Errorf("last line = %+v, want point 3's open-model interval with 1 non-2xx", last)
	}
	var sum [4]int64
	for _, r := range got[:3] {
		sum[0] += r.Requests
		sum[1] += r.Failed
		sum[2] += r.Non2xx
		sum[3] += r.Bytes
	}
	res := runs[1].Result
	if sum != [4]int64{res.CompleteRequests, res.FailedRequests, res.Non2xxResponses, res.TotalTransferredBytes} {
		t.Errorf("run 0:1's intervals sum to %v (requests, failed, non-2xx, bytes), its result has %d, %d, %d, %d",
			sum, res.CompleteRequests, res.FailedRequests, res.Non2xxResponses, res.TotalTransferredBytes)
	}
	if got[1].P50Ms < 19 || got[0].P50Ms > 1.1 {
		t.Errorf("p50 = %v ms then %v ms, want ~1 ms then ~20 ms", got[0].P50Ms, got[1].P50Ms)
	}
}

// TestTimelineCSV: a header of the run's columns and every TimelinePoint
// field, one row per interval per run, whose cells parse back to the
// intervals; the open model's columns are empty for a closed-model run.
func TestTimelineCSV(t *testing.T) {
	j, runs := timelineJob(t)
	want := wantTimelineRows(t, runs)
	rows, err := csv.NewReader(bytes.NewReader(renderTimeline(t, FormatTimelineCSV, j, runs))).ReadAll()
	if err != nil {
		t.Fatalf("timeline CSV does not parse: %v", err)
	}
	head := rows[0]
	for _, name := range []string{"target", "point", "concurrency", "stop", "repeat", "t_s", "requests", "succeeded", "failed",
		"failures_timeout", "non_2xx", "bytes", "p50_ms", "p90_ms", "p99_ms", "max_ms", "intended_rps", "max_send_lag_ms"} {
		if !slices.Contains(head, name) {
			t.Errorf("header %q lacks %s", head, name)
		}
	}
	if len(rows)-1 != len(want) {
		t.Fatalf("%d rows, want %d (one per interval)", len(rows)-1, len(want))
	}
	cell := func(row []string, name string) string { return row[slices.Index(head, name)] }
	num := func(row []string, name string) float64 {
		v, err := strconv.ParseFloat(cell(row, name), 64)
		if err != nil {
			t.Fatalf("column %s = %q: %v", name, cell(row, name), err)
		}
		return v
	}
	for i, row := range rows[1:] {
		w := want[i]
		got := []float64{num(row, "t_s"), num(row, "requests"), num(row, "succeeded"), num(row, "failed"), num(row, "non_2xx"),
			num(row, "bytes"), num(row, "p50_ms"), num(row, "p90_ms"), num(row, "p99_ms"), num(row, "max_ms")}
		exp := []float64{w.TS, float64(w.Requests), float64(w.Succeeded), float64(w.Failed), float64(w.Non2xx),
			float64(w.Bytes), w.P50Ms, w.P90Ms, w.P99Ms, w.MaxMs}
		if !slices.Equal(got, exp) {
			t.Errorf("row %d = %v, want %v", i, got, exp)
		}
	}
	if c := cell(rows[1], "intended_rps"); c != "" {
		t.Errorf("closed-model row's intended_rps = %q, want empty", c)
	}
	if c := cell(rows[4], "intended_rps"); c != "10" {
		t.Errorf("open-model row's intended_rps = %q, want 10", c)
	}
	if c := cell(rows[4], "failures_timeout"); c != "2" {
		t.Errorf("open-model row's failures_timeout = %q, want 2", c)
	}
}

func equalPoints(a, b abreport.TimelinePoint) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// hgrmRow is one percentile line of a .hgrm file.
type hgrmRow struct {
	value, percentile float64
	count             int64
}

// parseHGRM reads a .hgrm as HdrHistogram's plotter does (lines of four
// space-separated numbers not starting with #: value and 1/(1-percentile)),
// plus the 100 % line and the footer's totals.
func parseHGRM(t *testing.T, text string) (rows []hgrmRow, plotted int, footer map[string]float64) {
	t.Helper()
	footer = map[string]float64{}
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "#[") && !strings.HasPrefix(line, "#[run ") && strings.Contains(line, "=") {
			for part := range strings.SplitSeq(strings.Trim(line, "#[]"), ",") {
				k, v, _ := strings.Cut(part, "=")
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					footer[strings.TrimSpace(k)] = f
				}
			}
			continue
		}
		f := strings.Fields(line)
		if line == "" || line[0] == '#' || len(f) < 3 {
			continue
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		n, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue // the column header
		}
		if len(f) == 4 {
			if _, err := strconv.ParseFloat(f[3], 64); err == nil {
				plotted++
			}
		}
		rows = append(rows, hgrmRow{v, p, n})
	}
	return rows, plotted, footer
}

// TestHGRM: a run's distribution in HdrHistogram's text, from the stored
// 3-digit histogram: the plotter finds a point per line but the last, the
// 100 % line holds the total count at the max, the footer's Total count
// is the run's complete requests and its bucket geometry is the one
// hdrhistogram-go prints for the same histogram.
func TestHGRM(t *testing.T) {
	j, runs := timelineJob(t)
	out := string(renderTimeline(t, FormatHGRM, j, runs))
	// The three runs in order, each under its "#" line.
	parts := strings.Split(out, "\n\n#[run ")
	if len(parts) != 3 || !strings.HasPrefix(out, "#[run 0:0: target apache, c=5, n=100, repeat 1/2]\n") ||
		!strings.HasPrefix(parts[1], "0:1: target apache, c=5, n=100, repeat 2/2]\n") {
		t.Fatalf("hgrm runs are not headed in point, repeat order:\n%s", out)
	}
	one := "#[run " + parts[1]
	if !strings.Contains(one, "\n       Value     Percentile TotalCount 1/(1-Percentile)\n\n") {
		t.Errorf("no Java-style column header:\n%s", one)
	}
	rows, plotted, footer := parseHGRM(t, one)
	res := runs[1].Result
	if len(rows) < 10 || plotted != len(rows)-1 {
		t.Fatalf("%d rows, %d the plotter reads; want many, all but the 100 %% line:\n%s", len(rows), plotted, one)
	}
	last := rows[len(rows)-1]
	if last.percentile != 1 || last.count != res.CompleteRequests || math.Abs(last.value-res.PercentilesMs.P100) > 0.03 {
		t.Errorf("last line = %+v, want 100 %% of %d requests at ~%v ms", last, res.CompleteRequests, res.PercentilesMs.P100)
	}
	if footer["Total count"] != float64(res.CompleteRequests) || footer["SubBuckets"] != 2048 {
		t.Errorf("footer = %v, want Total count %d, SubBuckets 2048", footer, res.CompleteRequests)
	}
	h, err := abreport.DecodeHistogram(res)
	if err != nil {
		t.Fatal(err)
	}
	if h.SignificantFigures() != 3 {
		t.Errorf("exported histogram has %d significant digits, want the stored 3", h.SignificantFigures())
	}
	var lib bytes.Buffer
	if _, err := h.PercentilesPrint(&lib, hgrmTicksPerHalfDistance, hgrmValueScale); err != nil {
		t.Fatal(err)
	}
	libRows, _, libFooter := parseHGRM(t, lib.String())
	if !slices.Equal(rows, libRows) {
		t.Errorf("rows differ from hdrhistogram-go's PercentilesPrint:\n%v\n%v", rows, libRows)
	}
	for _, k := range []string{"Mean", "StdDeviation", "Max", "Total count", "Buckets", "SubBuckets"} {
		if footer[k] != libFooter[k] {
			t.Errorf("footer %s = %v, hdrhistogram-go prints %v", k, footer[k], libFooter[k])
		}
	}
	// The fixture's run has no histogram: the header and a zero footer.
	rows, _, footer = parseHGRM(t, parts[0])
	if len(rows) != 0 || footer["Total count"] != 0 || footer["Buckets"] != libFooter["Buckets"] {
		t.Errorf("an empty run's hgrm has %d rows, footer %v; want none and a zero count", len(rows), footer)
	}
	if _, _, footer = parseHGRM(t, "#[run "+parts[2]); footer["Total count"] != float64(runs[0].Result.CompleteRequests) {
		t.Errorf("point 3's footer = %v, want Total count %d", footer, runs[0].Result.CompleteRequests)
	}
}
