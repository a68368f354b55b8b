package report

import (
	"bytes"
	"html/template"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/job"
)

// capacityAnalysis is the fixture's analysis with a capacity search's
// answer for its two targets.
func capacityAnalysis(t *testing.T) (*job.Job, []job.Run, job.Analysis) {
	t.Helper()
	j := fixtureJob()
	runs := fixtureRuns(j)
	a := fixtureAnalysis(j, runs)
	pct := 39.3
	a.Capacity = []job.Capacity{
		{Target: "apache", Rate: 8900, CILow: 8700, CIHigh: 9100, Reason: "converged", LimitedBy: "server_cpu",
			Requests: 412000, ElapsedS: 71, Probes: make([]job.CapacityProbe, 14)},
		{Target: "lighttpd", Rate: 12400, CILow: 12100, CIHigh: 12700, Reason: "converged", Baseline: "apache", Pct: &pct,
			Requests: 530000, ElapsedS: 76, Probes: make([]job.CapacityProbe, 15)},
	}
	a.CapacitySentence = "apache sustains 8 900 req/s [8 700, 9 100] at p99_ms < 50; lighttpd 12 400 [12 100, 12 700], +39 %"
	return j, runs, a
}

func TestCapacityInMarkdown(t *testing.T) {
	j, runs, a := capacityAnalysis(t)
	var buf bytes.Buffer
	if err := Write(&buf, FormatMarkdown, j, runs, a); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	if !strings.Contains(md, "\n## Capacity\n\n"+a.CapacitySentence+".\n") {
		t.Errorf("Markdown lacks the capacity sentence:\n%s", md)
	}
	want := []string{
		"| target | req/s | interval | vs baseline | ended | limited by | probes | requests | time |",
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
		"| apache | 8 900 | [8 700, 9 100] |  | converged | server_cpu | 14 | 412000 | 71 s |",
		"| lighttpd | 12 400 | [12 100, 12 700] | +39 % | converged | – | 15 | 530000 | 76 s |",
	}
	if got := tableAfter(t, md, a.CapacitySentence+"."); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("capacity table =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if chart := "`GET /v1/jobs/job_fixture/report?format=svg&chart=capacity`"; !strings.Contains(md, chart) {
		t.Errorf("Markdown does not say where the capacity chart is (%s)", chart)
	}
}

func TestCapacityInHTML(t *testing.T) {
	j, runs, a := capacityAnalysis(t)
	var buf bytes.Buffer
	if err := Write(&buf, FormatHTML, j, runs, a); err != nil {
		t.Fatal(err)
	}
	doc := buf.String()
	sentence := strings.ReplaceAll(template.HTMLEscapeString(a.CapacitySentence), "+", "&#43;")
	for _, part := range []string{"<h2>Capacity</h2>", "<p>" + sentence + ".</p>", "<td>[12 100, 12 700]</td>", "<td>&#43;39 %</td>",
		`<figure><svg role="img" aria-label="capacity: each probe`} {
		if !strings.Contains(doc, part) {
			t.Errorf("HTML report lacks %q", part)
		}
	}
	// Without a search, no section.
	a.Capacity, a.CapacitySentence = nil, ""
	buf.Reset()
	if err := Write(&buf, FormatHTML, j, runs, a); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Capacity") || strings.Contains(buf.String(), `aria-label="capacity`) {
		t.Error("HTML report without a search shows a capacity section")
	}
}
