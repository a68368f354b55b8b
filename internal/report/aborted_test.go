package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// TestAbortedRunsListed: a run a threshold aborted is listed, with the
// threshold and the reason, in the Markdown and HTML reports and in the
// View the dashboard renders, and the hgrm file's header says so; a job
// without an aborted run has no such section.
func TestAbortedRunsListed(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	a := fixtureAnalysis(j, runs)
	const by, why = "failed_ratio < 0.01", "failed_ratio 0.5 >= 0.01 after 200 requests"
	for i := range runs {
		if runs[i].Point == 1 && runs[i].Repeat == 1 {
			runs[i].Aborted, runs[i].AbortedBy, runs[i].AbortReason = true, by, why
		}
	}
	render := func(f Format, runs []job.Run) string {
		t.Helper()
		var buf bytes.Buffer
		if err := Write(&buf, f, j, runs, a); err != nil {
			t.Fatalf("Write(%s) = %v", f, err)
		}
		return buf.String()
	}
	md := render(FormatMarkdown, runs)
	row := "| lighttpd | c=5, n=100 | 2/2 | failed_ratio < 0.01 | " + why + " |"
	if got := tableAfter(t, md, "1 run ended early by a threshold marked to abort."); len(got) != 3 || got[2] != row {
		t.Errorf("Markdown's aborted runs = %q, want the header, the rule and %q", got, row)
	}
	doc := render(FormatHTML, runs)
	for _, part := range []string{"<h2>Aborted runs</h2>", "<td>failed_ratio &lt; 0.01</td>", "<td>failed_ratio 0.5 &gt;= 0.01 after 200 requests</td>"} {
		if !strings.Contains(doc, part) {
			t.Errorf("HTML report lacks %q", part)
		}
	}
	v, err := NewView(j, runs, a)
	if err != nil {
		t.Fatal(err)
	}
	if v.Aborted == nil || len(v.Aborted.Rows) != 1 || v.Aborted.Rows[0][3] != by || v.Aborted.Rows[0][4] != why {
		t.Errorf("View.Aborted = %+v, want one row naming %q and %q", v.Aborted, by, why)
	}

	// The CSV's last columns say which threshold aborted a run and why.
	rows, err := csv.NewReader(strings.NewReader(render(FormatCSV, runs))).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	head := rows[0]
	if got := head[len(head)-2:]; got[0] != "aborted_by" || got[1] != "abort_reason" {
		t.Fatalf("CSV's last columns = %q, want aborted_by, abort_reason", got)
	}
	aborted := 0
	for _, r := range rows[1:] {
		if r[len(r)-2] != "" {
			aborted++
			if r[len(r)-2] != by || r[len(r)-1] != why {
				t.Errorf("CSV row of the aborted run ends %q, want %q, %q", r[len(r)-2:], by, why)
			}
		}
	}
	if aborted != 1 {
		t.Errorf("CSV rows naming an abort = %d, want 1", aborted)
	}

	// The hgrm file names the run it holds; an aborted run's says so.
	stored := runs[0]
	stored.Aborted, stored.AbortedBy = true, by
	if h := render(FormatHGRM, []job.Run{stored}); !strings.Contains(h, `aborted by threshold "failed_ratio < 0.01"`) {
		t.Errorf("hgrm header of an aborted run does not say so:\n%.400s", h)
	}

	for i := range runs {
		runs[i].Aborted = false
	}
	if md, doc := render(FormatMarkdown, runs), render(FormatHTML, runs); strings.Contains(md, "Aborted runs") || strings.Contains(doc, "Aborted runs") {
		t.Error("a job without an aborted run lists aborted runs")
	}
}

// TestRampLabels: a ramp's point is labelled by its range, in the
// Markdown's heading, a run's ab header and a run's chart title.
func TestRampLabels(t *testing.T) {
	j := &job.Job{ID: "job_ramp", Status: job.StatusSucceeded, Spec: job.Spec{Name: "ramp",
		Targets: []job.Target{{Name: "a", URL: "http://127.0.0.1:8081/"}},
		Sweep: job.Sweep{Concurrency: []int{50}, Rate: []job.Rate{{From: 100, To: 5000}},
			Duration: []job.Duration{job.Duration(10 * time.Second)}, Repeats: 1}}}
	points := j.Spec.Points()
	if len(points) != 1 || points[0].Rate != 100 || points[0].RateTo != 5000 {
		t.Fatalf("points = %+v, want one ramp from 100 to 5000", points)
	}
	run := job.Run{RunKey: job.RunKey{}, Target: "a", Concurrency: 50, Result: fixtureReport(job.Point{Concurrency: 50, Requests: 1000}, 0, time.Now())}
	a := job.Analysis{Points: []job.PointSummary{{Point: points[0], Runs: 1, RPS: job.Stat{N: 1, Mean: 2000}, GoodRPS: job.Stat{N: 1, Mean: 2000}}}}
	var md bytes.Buffer
	if err := Write(&md, FormatMarkdown, j, []job.Run{run}, a); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "\n## rate = 100→5000/s\n") {
		t.Errorf("Markdown's heading of a ramp is not its range:\n%s", md.String())
	}
	var ab bytes.Buffer
	if err := Write(&ab, FormatAB, j, []job.Run{run}, a); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ab.String(), "==> target a, c=50, rate=100→5000/s, repeat 1/1 <==") {
		t.Errorf("ab header of a ramp's run is not its range:\n%.300s", ab.String())
	}
	if got := runTitle(j, run); got != "a · c=50 · rate=100→5000/s · repeat 1/1" {
		t.Errorf("runTitle = %q, want the ramp's range", got)
	}
}
