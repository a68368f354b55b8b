package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
)

// TestReportEndToEnd runs a real 2-target concurrency sweep with a baseline
// and thresholds on the in-process service and fetches every report format
// through `benchq report`, then once more into --out through run(). The
// threshold on b can never hold (no loopback request takes under 1 ns), so
// the verdict must be fail with b's two cells and none of a's.
func TestReportEndToEnd(t *testing.T) {
	m := startMain(t, nil)
	a, b := testservers.StartTarget(t, "hello from a", 0), testservers.StartTarget(t, "hello from b", 0)
	spec := sweepSpec(a, b)
	spec["baseline"] = "a"
	spec["thresholds"] = []string{"rps >= 1", "failed_ratio <= 0.01", "b: p99_ms < 0.000001"}
	j := submit(t, m.URL(), spec)
	got := waitJob(t, m.URL(), j.ID, 60*time.Second)
	if got.Status != "succeeded" || got.Verdict != "fail" {
		t.Fatalf("job ended %s (%s) with verdict %q, want succeeded with verdict fail", got.Status, got.Error, got.Verdict)
	}
	env := func(k string) string {
		if k == "BENCHQ_SERVER" {
			return m.URL()
		}
		return ""
	}
	checks := map[string]func(t *testing.T, out []byte){
		"ab":        hasAll("==> target a, c=1, n=200, repeat 1/2 <==", "==> target b, c=4, n=200, repeat 2/2 <==", "Complete requests:      200"),
		"http_load": hasAll("==> target b, c=1, n=200, repeat 1/2 <==", "200 fetches, 1 max parallel"),
		"json":      reportJSON,
		"csv":       reportCSV,
		"markdown": hasAll("## requests = 200", "| | c=1 | c=4 |", "\n| a | ", "\n| b | ", "\n| b vs a | ",
			"## Saturation\n\n- a: req/s ", "\n- b: req/s ", "## Verdict: fail", "2 failing cells", "b: p99_ms < 0.000001"),
		"svg":     reportSVG,
		"html":    hasAll("<!DOCTYPE html>", "<svg ", "<h2>Verdict: <span class=\"verdict verdict-fail\">fail</span></h2>", "<summary>==&gt; target b, c=4, n=200, repeat 2/2 &lt;==</summary>"),
		"gnuplot": hasAll("# columns: concurrency\ta\tb\n", "\n1\t", "\n4\t"),
	}
	for format, check := range checks {
		t.Run(format, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := clicmd.Report(t.Context(), []string{j.ID, "--format", format}, clicmd.Env{Getenv: env, Stdout: &stdout, Stderr: &stderr})
			if code != clicmd.ReportExitOK {
				t.Fatalf("benchq report %s --format %s = exit %d (%s), want 0", j.ID, format, code, stderr.String())
			}
			check(t, stdout.Bytes())
		})
	}
	t.Run("a run's charts", func(t *testing.T) {
		for chart, want := range map[string]string{"timeline": "latency percentiles per interval", "distribution": "latency by percentile"} {
			var stdout, stderr bytes.Buffer
			args := []string{j.ID, "--chart", chart, "--run", "3:1"}
			if code := clicmd.Report(t.Context(), args, clicmd.Env{Getenv: env, Stdout: &stdout, Stderr: &stderr}); code != clicmd.ReportExitOK {
				t.Fatalf("benchq report %q = exit %d (%s), want 0", args, code, stderr.String())
			}
			hasAll("<svg ", want, "b · c=4 · n=200 · repeat 2/2")(t, stdout.Bytes())
		}
		var stdout, stderr bytes.Buffer
		args := []string{j.ID, "--chart", "timeline"}
		if code := clicmd.Report(t.Context(), args, clicmd.Env{Getenv: env, Stdout: &stdout, Stderr: &stderr}); code != clicmd.ReportExitUsage ||
			!strings.Contains(stderr.String(), "name one as run=POINT:REPEAT") {
			t.Errorf("benchq report %q = exit %d (%s), want %d and the API's word that a run must be named", args, code, stderr.String(), clicmd.ReportExitUsage)
		}
	})
	t.Run("out file through run()", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "r.md")
		var stdout, stderr bytes.Buffer
		args := []string{"report", j.ID, "--format", "markdown", "--server", m.URL(), "--out", path}
		if code := run(t.Context(), args, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("benchq %q = exit %d (%s), want 0", args, code, stderr.String())
		}
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), "| | c=1 | c=4 |") || stdout.Len() != 0 {
			t.Errorf("--out file = %q (%v), stdout %q; want the Markdown table in the file only", b, err, stdout.String())
		}
	})
}

func hasAll(parts ...string) func(*testing.T, []byte) {
	return func(t *testing.T, out []byte) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(string(out), p) {
				t.Errorf("report lacks %q:\n%.2000s", p, out)
			}
		}
	}
}

func reportJSON(t *testing.T, out []byte) {
	var doc struct {
		Job      struct{ ID, Status string } `json:"job"`
		Runs     []job.Run                   `json:"runs"`
		Analysis struct {
			Points []struct {
				RPS struct {
					N    int     `json:"n"`
					Mean float64 `json:"mean"`
				} `json:"rps"`
			} `json:"points"`
		} `json:"analysis"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("JSON report: %v", err)
	}
	if doc.Job.Status != "succeeded" || len(doc.Runs) != 8 || len(doc.Analysis.Points) != 4 {
		t.Fatalf("JSON report = %s job, %d runs, %d points; want succeeded, 8, 4", doc.Job.Status, len(doc.Runs), len(doc.Analysis.Points))
	}
	for i, p := range doc.Analysis.Points {
		if p.RPS.N != 2 || p.RPS.Mean <= 0 {
			t.Errorf("point %d rps = %+v, want 2 repeats with a positive mean", i, p.RPS)
		}
	}
}

func reportCSV(t *testing.T, out []byte) {
	rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("CSV report: %v", err)
	}
	if len(rows) != 9 {
		t.Fatalf("CSV rows = %d, want 9 (header + 8 runs)", len(rows))
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, r := range rows[1:] {
		if r[col["complete_requests"]] != "200" || r[col["requests"]] != "200" || r[col["concurrency"]] != r[col["concurrency_level"]] {
			t.Errorf("CSV row %v: want 200 complete requests at the point's concurrency", r[:8])
		}
	}
}

func reportSVG(t *testing.T, out []byte) {
	dec := xml.NewDecoder(bytes.NewReader(out))
	paths := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG report is not XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "path" {
			paths++
		}
	}
	// 4 bars, 8 latency points and 3 legend swatches at the least, plus axes and lines.
	if paths < 15 {
		t.Errorf("SVG report has %d paths, want at least 15", paths)
	}
}

// TestReportCommandErrors checks the exit codes: 3 for usage and an
// unreachable server, 2 for an unknown job.
func TestReportCommandErrors(t *testing.T) {
	m := startMain(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	noEnv := func(string) string { return "" }
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no job id", []string{"--server", m.URL()}, clicmd.ReportExitUsage},
		{"two job ids", []string{"a", "b", "--server", m.URL()}, clicmd.ReportExitUsage},
		{"bad format", []string{"job_x", "--format", "pdf", "--server", m.URL()}, clicmd.ReportExitUsage},
		{"unreachable server", []string{"job_x", "--server", closed}, clicmd.ReportExitUsage},
		{"unknown job", []string{"--server", m.URL(), "job_missing"}, clicmd.ReportExitNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := clicmd.Report(t.Context(), tt.args, clicmd.Env{Getenv: noEnv, Stdout: &stdout, Stderr: &stderr}); got != tt.want {
				t.Errorf("benchq report %q = exit %d (%s), want %d", tt.args, got, stderr.String(), tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("benchq report %q wrote %q to stdout, want nothing", tt.args, stdout.String())
			}
		})
	}
}
