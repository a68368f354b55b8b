package report

import (
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/job"
)

func emptyAnalysis() job.Analysis {
	return job.Analysis{Verdict: job.VerdictResult{Result: job.VerdictNone}}
}

// tableAfter returns the lines of the first table after a heading.
func tableAfter(t *testing.T, md, heading string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("Markdown lacks the heading %q:\n%s", heading, md)
	}
	var rows []string
	for line := range strings.SplitSeq(strings.TrimLeft(rest, "\n"), "\n") {
		if !strings.HasPrefix(line, "|") {
			break
		}
		rows = append(rows, line)
	}
	return rows
}

// TestMarkdownLayout checks seeds/003's layout: one table per request
// count, columns = concurrency, one row per target, then the comparison
// row against the baseline.
func TestMarkdownLayout(t *testing.T) {
	md := string(render(t, FormatMarkdown))
	tables := map[string][2]string{
		// lighttpd at c = 100 is client-bound in one repeat: marked.
		"## requests = 100":  {"| apache | 99.00 | 990.00 | 940.50 (5.0 % errors) |", "| lighttpd | 99.50 | 1039.50 | 1089.00 † |"},
		"## requests = 1000": {"| apache | 103.95 | 1039.50 | 1039.50 |", "| lighttpd | 104.47 | 1091.47 | 1143.45 † |"},
	}
	for heading, targets := range tables {
		rows := tableAfter(t, md, heading)
		want := []string{
			"| | c=5 | c=50 | c=100 |",
			"| --- | ---: | ---: | ---: |",
			targets[0], targets[1],
			"| lighttpd vs apache | ~ +0.50 % [-1.5, +2.5] (p=0.40) | +5.00 % [+3.0, +7.0] (p=0.01) | +10.00 % [+8.0, +12.0] (p=0.01) |",
		}
		if strings.Join(rows, "\n") != strings.Join(want, "\n") {
			t.Errorf("table under %q =\n%s\nwant\n%s", heading, strings.Join(rows, "\n"), strings.Join(want, "\n"))
		}
	}
	legend := "\n† the load generator was short of CPU in at least one repeat: that req/s measures the client, not the server.\n"
	if n := strings.Count(md, legend); n != 2 {
		t.Errorf("Markdown has the client legend %d times, want once under each table:\n%s", n, md)
	}
	for _, text := range []string{"- apache (requests = 100) stops scaling at c=50.", "## Verdict: fail", "4 failing cells",
		"| `p99_ms < 200` | lighttpd | c=100, n=1000 | 218.66 |"} {
		if !strings.Contains(md, text) {
			t.Errorf("Markdown lacks %q:\n%s", text, md)
		}
	}
}

// TestMarkdownNoBaseline drops the comparison rows when the spec names no
// baseline, and a pipe in a target name does not split a cell.
func TestMarkdownNoBaseline(t *testing.T) {
	j := fixtureJob()
	j.Spec.Baseline = ""
	j.Spec.Targets[1].Name = "light|tpd"
	runs := fixtureRuns(j)
	var sb strings.Builder
	if err := Write(&sb, FormatMarkdown, j, runs, fixtureAnalysis(j, runs)); err != nil {
		t.Fatal(err)
	}
	rows := tableAfter(t, sb.String(), "## requests = 100")
	if len(rows) != 4 {
		t.Fatalf("table rows = %d, want 4 (header, rule, 2 targets):\n%s", len(rows), strings.Join(rows, "\n"))
	}
	if want := `| light\|tpd | 99.50 | 1039.50 | 1089.00 † |`; rows[3] != want {
		t.Errorf("row of the piped name = %q, want %q", rows[3], want)
	}
}

// TestMarkdownNoRuns says so instead of printing empty tables.
func TestMarkdownNoRuns(t *testing.T) {
	var sb strings.Builder
	if err := Write(&sb, FormatMarkdown, fixtureJob(), nil, emptyAnalysis()); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"No runs yet.", "## Verdict: none", "No thresholds were set."} {
		if !strings.Contains(sb.String(), text) {
			t.Errorf("Markdown of a job without runs lacks %q:\n%s", text, sb.String())
		}
	}
	if strings.Contains(sb.String(), "| c=") {
		t.Errorf("Markdown of a job without runs has a table:\n%s", sb.String())
	}
}

// TestMarkdownComparisonPairs gives one row per pair of the spec's
// comparisons, the baseline shorthand's first, each cell the comparison
// with that pair's baseline.
func TestMarkdownComparisonPairs(t *testing.T) {
	j := fixtureJob()
	j.Spec.Comparisons = []job.ComparisonPair{{Target: "apache", Baseline: "lighttpd"}}
	runs := fixtureRuns(j)
	a := fixtureAnalysis(j, runs)
	for i := range a.Points {
		ps := &a.Points[i]
		if ps.Point.Target == "apache" {
			sig := job.Significance{Text: "-9.09 % [-11.0, -7.0] (p=0.002)"}
			ps.Comparisons = []job.Comparison{{Baseline: "lighttpd", RPS: "-9.09 %", RPSSignificance: sig}}
		}
	}
	var sb strings.Builder
	if err := Write(&sb, FormatMarkdown, j, runs, a); err != nil {
		t.Fatal(err)
	}
	rows := tableAfter(t, sb.String(), "## requests = 100")
	if len(rows) != 6 || !strings.HasPrefix(rows[4], "| lighttpd vs apache | ~ +0.50 %") ||
		rows[5] != "| apache vs lighttpd | -9.09 % [-11.0, -7.0] (p=0.002) | -9.09 % [-11.0, -7.0] (p=0.002) | -9.09 % [-11.0, -7.0] (p=0.002) |" {
		t.Errorf("table =\n%s\nwant the baseline's row, then apache vs lighttpd", strings.Join(rows, "\n"))
	}
}
