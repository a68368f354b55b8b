package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// seedFinishedJob stores a succeeded 2-target job (a, b × c=1,2 × n=10 ×
// 2 repeats, baseline a) with every run, b twice as fast as a.
func seedFinishedJob(env *testEnv) string {
	spec := job.Spec{
		Targets:  []job.Target{{Name: "a", URL: "http://127.0.0.1:1/"}, {Name: "b", URL: "http://127.0.0.1:2/"}},
		Sweep:    job.Sweep{Concurrency: []int{1, 2}, Requests: []int{10}, Repeats: 2},
		Baseline: "a",
	}.WithDefaults()
	const id = "job_report"
	env.store.jobs[id] = &job.Job{ID: id, Owner: anonymousOwner, Spec: spec, Status: job.StatusSucceeded, CreatedAt: time.Now().UTC()}
	points := spec.Points()
	for _, k := range spec.Schedule() {
		p := points[k.Point]
		rps := float64(100 * (p.TargetIndex + 1) * p.Concurrency)
		env.store.runs[id] = append(env.store.runs[id], job.Run{
			RunKey: k, Target: p.Target, Concurrency: p.Concurrency,
			Result: &abreport.Report{
				ServerHostname: "127.0.0.1", DocumentPath: "/", ConcurrencyLevel: p.Concurrency,
				CompleteRequests: 10, TimeTakenS: 10 / rps, RequestsPerSecond: rps,
				TimePerRequestMs: 1000 * float64(p.Concurrency) / rps,
				PercentilesMs:    abreport.Percentiles{P50: 5, P99: 9, P100: 10},
				StatusCodes:      map[int]int64{200: 10},
			},
		})
	}
	return id
}

// TestReportEveryFormat fetches each format and checks its media type and
// a piece of content only that format has.
func TestReportEveryFormat(t *testing.T) {
	env := newTestEnv(t, nil)
	id := seedFinishedJob(env)
	tests := []struct {
		format, contentType string
		check               func(t *testing.T, body []byte)
	}{
		{"ab", "text/plain; charset=utf-8", contains("==> target b, c=2, n=10, repeat 2/2 <==", "Requests per second:    400.00 [#/sec] (mean)")},
		{"http_load", "text/plain; charset=utf-8", contains("==> target a, c=1, n=10, repeat 1/2 <==", "10 fetches, 1 max parallel")},
		{"json", "application/json", checkJSON},
		{"csv", "text/csv; charset=utf-8", checkCSV},
		{"markdown", "text/markdown; charset=utf-8", contains("| | c=1 | c=2 |", "| b | 200.00 | 400.00 |", "| b vs a | +100.00 % [+100.00, +100.00] (p<0.001) | +100.00 % [+100.00, +100.00] (p<0.001) |")},
		{"svg", "image/svg+xml", checkSVG},
		{"png", "image/png", checkPNG},
		{"html", "text/html; charset=utf-8", contains("<!DOCTYPE html>", "<svg ", "<table>", "<details>", "==&gt; target b, c=2, n=10, repeat 2/2 &lt;==")},
		{"gnuplot", "text/tab-separated-values; charset=utf-8", contains("# columns: concurrency\ta\tb\n", "2\t200.00\t400.00\n")},
		{"timeline-csv", "text/csv; charset=utf-8", contains("target,point,concurrency,stop,repeat,t_s,interval_s,requests,")},
		{"timeline-ndjson", "application/x-ndjson", func(t *testing.T, body []byte) {
			if len(body) != 0 {
				t.Errorf("runs stored without a timeline gave lines: %s", body)
			}
		}},
		{"hgrm", "text/plain; charset=utf-8", contains("#[run 3:1: target b, c=2, n=10, repeat 2/2]\n       Value     Percentile TotalCount 1/(1-Percentile)\n")},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+id+"/report?format="+tt.format, "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET report?format=%s = %d %s, want 200", tt.format, resp.StatusCode, body)
			}
			if got := resp.Header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tt.contentType)
			}
			tt.check(t, body)
			csp := resp.Header.Get("Content-Security-Policy")
			if (tt.format == "html") != strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy = %q; want default-src 'none' on html only", csp)
			}
		})
	}
}

func checkPNG(t *testing.T, body []byte) {
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("PNG report: %v", err)
	}
	if w := img.Bounds().Dx(); w != 960 {
		t.Errorf("PNG report is %d px wide, want 960", w)
	}
}

func contains(parts ...string) func(*testing.T, []byte) {
	return func(t *testing.T, body []byte) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(string(body), p) {
				t.Errorf("report lacks %q:\n%.1500s", p, body)
			}
		}
	}
}

func checkJSON(t *testing.T, body []byte) {
	var doc struct {
		Job      job.Job      `json:"job"`
		Runs     []job.Run    `json:"runs"`
		Analysis job.Analysis `json:"analysis"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("JSON report: %v", err)
	}
	if doc.Job.ID != "job_report" || len(doc.Runs) != 8 {
		t.Errorf("JSON report = job %q with %d runs, want job_report with 8", doc.Job.ID, len(doc.Runs))
	}
	if len(doc.Analysis.Points) != 4 {
		t.Errorf("JSON analysis has %d points, want 4 (analysis.Analyze over the runs)", len(doc.Analysis.Points))
	}
}

func checkCSV(t *testing.T, body []byte) {
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil {
		t.Fatalf("CSV report: %v", err)
	}
	if len(rows) != 9 || rows[0][0] != "target" {
		t.Errorf("CSV report = %d rows starting %q, want 9 (header + 8 runs) starting target", len(rows), rows[0])
	}
}

func checkSVG(t *testing.T, body []byte) {
	dec := xml.NewDecoder(strings.NewReader(string(body)))
	var root string
	for root == "" {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("SVG report is not XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok {
			root = el.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("SVG report's root element = %q, want svg", root)
	}
	contains("requests = 10", ">2</text>", "p99 latency", "latency (ms, log scale)")(t, body)
}

// TestReportAccept picks the format from Accept when ?format= is absent.
func TestReportAccept(t *testing.T) {
	env := newTestEnv(t, nil)
	id := seedFinishedJob(env)
	tests := []struct{ accept, want string }{
		{"text/markdown", "text/markdown; charset=utf-8"},
		{"text/plain", "text/plain; charset=utf-8"},
		{"image/svg+xml", "image/svg+xml"},
		{"text/html, */*;q=0.8", "application/json"},
		{"", "application/json"},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(http.MethodGet, env.url+"/v1/jobs/"+id+"/report", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || got != tt.want {
			t.Errorf("GET report with Accept %q = %d %q, want 200 %q", tt.accept, resp.StatusCode, got, tt.want)
		}
		if v := resp.Header.Get("Vary"); v != "Accept" {
			t.Errorf("Vary = %q, want Accept", v)
		}
	}
}

func TestReportErrors(t *testing.T) {
	env := newTestEnv(t, nil)
	id := seedFinishedJob(env)

	resp, body := env.do(t, http.MethodGet, "/v1/jobs/"+id+"/report?format=pdf", "")
	p := problem(t, resp, body)
	if resp.StatusCode != http.StatusBadRequest || p.Field != "format" || !strings.Contains(p.Detail, "pdf") {
		t.Errorf("GET report?format=pdf = %d %+v, want 400 naming field format and the value", resp.StatusCode, p)
	}

	resp, body = env.do(t, http.MethodGet, "/v1/jobs/nope/report?format=csv", "")
	if p := problem(t, resp, body); resp.StatusCode != http.StatusNotFound || p.Type != problemBase+"not-found" {
		t.Errorf("GET report of an unknown job = %d %+v, want 404 not-found", resp.StatusCode, p)
	}
}
