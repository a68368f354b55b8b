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
