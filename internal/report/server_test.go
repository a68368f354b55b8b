package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/monitor"
)

// TestServerCPUInReports: with the target's monitor readings stored, the
// http_load text puts seed 004's "cpu N%" line above each run's summary,
// the ab text ends each run with the server's CPU, and the Markdown and HTML tables show the server's CPU beside req/s,
// with a legend; the saturation sentence names the limit.
func TestServerCPUInReports(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	for i := range runs {
		busy, share := 0.55, 0.55
		if runs[i].Target == "lighttpd" {
			busy, share = 1, 1
		}
		runs[i].Server = &monitor.Server{CoresBusy: &busy, CPUShare: &share, Cores: 1, CoresFrom: monitor.CoresFromSpec}
	}
	a := analysis.Analyze(j.Spec, runs)
	render := func(f Format) string {
		var b bytes.Buffer
		if err := Write(&b, f, j, runs, a); err != nil {
			t.Fatalf("Write %s: %v", f, err)
		}
		return b.String()
	}
	text := render(FormatHTTPLoad)
	if n := strings.Count(text, "<==\ncpu 55%\n"); n != 12 {
		t.Errorf("http_load text: %d apache runs with \"cpu 55%%\" under their header, want 12:\n%.600s", n, text)
	}
	if n := strings.Count(text, "<==\ncpu 100%\n"); n != 12 {
		t.Errorf("http_load text: %d lighttpd runs with \"cpu 100%%\" under their header, want 12", n)
	}
	ab := render(FormatAB)
	if n := strings.Count(ab, "\nServer CPU: 0.55 of 1 core busy (55 %)\n"); n != 12 {
		t.Errorf("ab text: %d apache runs end with the server's CPU, want 12:\n%.3000s", n, ab)
	}
	md := render(FormatMarkdown)
	for _, want := range []string{", cpu 55 %", ", cpu 100 %", "cpu: the share of the server's cores", "server CPU is the limit"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if html := render(FormatHTML); !strings.Contains(html, "cpu 100 %") {
		t.Errorf("html lacks the server's CPU beside req/s")
	}
	// Without readings nothing changes: the ab and http_load text stay the tools' own.
	for i := range runs {
		runs[i].Server = nil
	}
	a = analysis.Analyze(j.Spec, runs)
	if strings.Contains(render(FormatHTTPLoad), "cpu ") || strings.Contains(render(FormatMarkdown), "cpu ") || strings.Contains(render(FormatAB), "Server CPU") {
		t.Errorf("a job without monitor readings shows a server CPU")
	}
}

// TestBusyStartsInReports: runs that waited for a quiet server say so at
// the end of their ab text; a run that began on a busy server is counted
// in its point's summary and named under the Markdown table.
func TestBusyStartsInReports(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	busyRuns := 0
	for i := range runs {
		busy, share := 0.5, 0.5
		settled := &monitor.Settled{WaitedS: 1.5, Quiet: true}
		if runs[i].Target == "lighttpd" && runs[i].Repeat == 0 {
			settled = &monitor.Settled{WaitedS: 120, CoresBusy: 0.9, Message: "the server still kept 0.90 of its 1 core busy after 2m0s: the run began anyway"}
			busyRuns++
		}
		runs[i].Server = &monitor.Server{CoresBusy: &busy, CPUShare: &share, Cores: 1, Settled: settled}
	}
	a := analysis.Analyze(j.Spec, runs)
	starts := 0
	for _, p := range a.Points {
		starts += p.BusyStarts
	}
	if starts != busyRuns {
		t.Errorf("busy starts over the points = %d, want %d", starts, busyRuns)
	}
	var ab, md bytes.Buffer
	if err := Write(&ab, FormatAB, j, runs, a); err != nil {
		t.Fatal(err)
	}
	if err := Write(&md, FormatMarkdown, j, runs, a); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(ab.String(), "; began on a quiet server after 1.5 s\n"); n != len(runs)-busyRuns {
		t.Errorf("ab text: %d runs say they began on a quiet server, want %d", n, len(runs)-busyRuns)
	}
	if n := strings.Count(ab.String(), "; began on a busy server\n"); n != busyRuns {
		t.Errorf("ab text: %d runs say they began on a busy server, want %d", n, busyRuns)
	}
	if !strings.Contains(md.String(), "Began on a busy server") || !strings.Contains(md.String(), "lighttpd at c=") {
		t.Errorf("markdown does not name the runs that began on a busy server:\n%s", md.String())
	}
}
