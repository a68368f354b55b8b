package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// TestABHeaders checks that every run appears once, in point then repeat
// order, under a header naming target, point and repeat, followed by ab's
// own first line.
func TestABHeaders(t *testing.T) {
	for _, f := range []Format{FormatAB, FormatHTTPLoad} {
		out := string(render(t, f))
		re := regexp.MustCompile(`(?m)^==> target (\w+), c=(\d+), n=(\d+), repeat (\d)/2 <==$`)
		heads := re.FindAllStringSubmatch(out, -1)
		if len(heads) != 24 {
			t.Fatalf("%s: %d run headers, want 24 (2 targets × 3 c × 2 n × 2 repeats)", f, len(heads))
		}
		if got, want := heads[0][0], "==> target apache, c=5, n=100, repeat 1/2 <=="; got != want {
			t.Errorf("%s: first header = %q, want %q", f, got, want)
		}
		if got, want := heads[1][4], "2"; got != want {
			t.Errorf("%s: second header's repeat = %s, want %s (repeats of a point stay together)", f, got, want)
		}
	}
	if n := strings.Count(string(render(t, FormatAB)), "<==\nServer Software:        "); n != 24 {
		t.Errorf("ab reports directly under a header = %d, want 24", n)
	}
}

// TestCSVColumns parses the CSV and checks one row per run with every
// column filled from the right run.
func TestCSVColumns(t *testing.T) {
	rows, err := csv.NewReader(bytes.NewReader(render(t, FormatCSV))).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	if len(rows) != 25 {
		t.Fatalf("CSV rows = %d, want 25 (header + 24 runs)", len(rows))
	}
	head := rows[0]
	for _, col := range []string{"target", "point", "concurrency", "requests", "duration", "rate", "repeat",
		"requests_per_second", "failed_connect", "connection_times_ms_total_median", "connection_times_ms_connect_sd",
		"percentiles_ms_50", "percentiles_ms_99", "percentiles_ms_100", "status_codes", "started_at"} {
		if !slices.Contains(head, col) {
			t.Errorf("CSV header lacks %q", col)
		}
	}
	if slices.Contains(head, "latency_histogram") {
		t.Errorf("CSV header has latency_histogram, a blob no spreadsheet reads")
	}
	idx := func(name string) int { return slices.Index(head, name) }
	// The second repeat is repeat 1, as in the JSON results.
	last := rows[24]
	want := map[string]string{"target": "lighttpd", "concurrency": "100", "requests": "1000", "duration": "",
		"repeat": "1", "concurrency_level": "100", "complete_requests": "1000", "status_codes": "200:1000"}
	for col, v := range want {
		if got := last[idx(col)]; got != v {
			t.Errorf("last row %s = %q, want %q", col, got, v)
		}
	}
}

// TestJSONDocument decodes the JSON report and checks its three parts.
func TestJSONDocument(t *testing.T) {
	var doc struct {
		Job      job.Job      `json:"job"`
		Runs     []job.Run    `json:"runs"`
		Analysis job.Analysis `json:"analysis"`
	}
	if err := json.Unmarshal(render(t, FormatJSON), &doc); err != nil {
		t.Fatalf("JSON report does not decode: %v", err)
	}
	if doc.Job.ID != "job_fixture" || len(doc.Runs) != 24 || len(doc.Analysis.Points) != 12 {
		t.Fatalf("JSON report = job %q, %d runs, %d points; want job_fixture, 24, 12", doc.Job.ID, len(doc.Runs), len(doc.Analysis.Points))
	}
	if doc.Runs[0].Result == nil || doc.Runs[0].Result.RequestsPerSecond != 100 {
		t.Errorf("first run's result = %+v, want 100 req/s", doc.Runs[0].Result)
	}
	if doc.Analysis.Verdict.Result != job.VerdictFail || len(doc.Analysis.Saturation) != 2 {
		t.Errorf("analysis verdict %q, %d saturation; want fail, 2", doc.Analysis.Verdict.Result, len(doc.Analysis.Saturation))
	}
	var cmp int
	for _, p := range doc.Analysis.Points {
		if p.Comparison != nil {
			cmp++
		}
	}
	if cmp != 6 {
		t.Errorf("points with a comparison = %d, want 6 (every lighttpd point)", cmp)
	}
}

// TestGnuplotBlocks checks one block per request count with one column per
// target, readable as tab-separated numbers.
func TestGnuplotBlocks(t *testing.T) {
	out := string(render(t, FormatGnuplot))
	blocks := strings.Split(out, "\n\n\n")
	if len(blocks) != 2 {
		t.Fatalf("gnuplot data blocks = %d, want 2", len(blocks))
	}
	if !strings.Contains(out, "# columns: concurrency\tapache\tlighttpd\n") {
		t.Errorf("gnuplot header does not name the columns:\n%s", out)
	}
	var data []string
	for line := range strings.SplitSeq(blocks[1], "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			data = append(data, line)
		}
	}
	want := []string{"5\t103.95\t104.47", "50\t1039.50\t1091.47", "100\t1039.50\t1143.45"}
	if !slices.Equal(data, want) {
		t.Errorf("block 1 rows = %q, want %q", data, want)
	}
}

// TestSkipsRunsWithoutResult leaves out a run the store kept without a
// result and a run naming a point the spec lacks, instead of panicking.
func TestSkipsRunsWithoutResult(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)[:2]
	runs[0].Result = nil
	runs = append(runs, job.Run{RunKey: job.RunKey{Point: 99}, Result: runs[1].Result})
	for _, f := range Formats() {
		var buf bytes.Buffer
		if err := Write(&buf, f, j, runs, emptyAnalysis()); err != nil {
			t.Errorf("Write(%s) = %v, want nil", f, err)
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, FormatAB, j, runs, emptyAnalysis()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "==> target"); n != 1 {
		t.Errorf("ab report of 1 usable run has %d headers, want 1", n)
	}
}

// TestJSONLeavesOutStoredMeasurements: a run's stored measurement is for
// merging and large; the report shows its result only, and the caller's
// runs keep theirs.
func TestJSONLeavesOutStoredMeasurements(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	for i := range runs {
		runs[i].Measurement = json.RawMessage(`{"v":1,"complete":100}`)
	}
	var buf bytes.Buffer
	if err := Write(&buf, FormatJSON, j, runs, analysis.Analyze(j.Spec, runs)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []map[string]json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JSON report does not decode: %v", err)
	}
	if len(doc.Runs) != len(runs) {
		t.Fatalf("JSON report has %d runs, want %d", len(doc.Runs), len(runs))
	}
	for i, r := range doc.Runs {
		if _, ok := r["measurement"]; ok {
			t.Errorf("run %d of the JSON report shows its stored measurement", i)
		}
		if _, ok := r["result"]; !ok {
			t.Errorf("run %d of the JSON report has no result", i)
		}
	}
	if len(runs[0].Measurement) == 0 {
		t.Error("Write cleared the caller's stored measurement")
	}
}

// A run a threshold aborted says so in its header, with the threshold
// and the reason, in the ab text and the HTML report.
func TestAbortedRunHeader(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	runs[0].Aborted, runs[0].AbortedBy, runs[0].AbortReason = true, "failed_ratio < 0.01", "failed_ratio 0.5 >= 0.01 after 200 requests"
	const want = `, aborted by threshold "failed_ratio < 0.01": failed_ratio 0.5 >= 0.01 after 200 requests <==`
	var views []runView
	for _, v := range runViews(j, runs) {
		if v.Aborted {
			views = append(views, v)
		}
	}
	if len(views) != 1 || !strings.HasSuffix(views[0].header(), want) {
		t.Fatalf("aborted runs' headers = %v, want one ending %q", views, want)
	}
	if got := runTitle(j, runs[0]); !strings.HasSuffix(got, " · aborted") {
		t.Errorf("runTitle = %q, want it to end with · aborted", got)
	}
}
