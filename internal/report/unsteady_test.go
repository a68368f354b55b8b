package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestReportsMarkUnsteadyPoints: a point with an unsteady repeat is marked
// § in Markdown and HTML, the legend giving the count and the reason; the
// other points are not.
func TestReportsMarkUnsteadyPoints(t *testing.T) {
	j := fixtureJob()
	runs := fixtureRuns(j)
	a := fixtureAnalysis(j, runs)
	ps := &a.Points[0]
	ps.Unsteady, ps.UnsteadyReason = 1, "p50 rose 17× from 1.2 ms to 20 ms at 4 s of the run"
	want := "§ unsteady: throughput or latency shifted during a run, so its averages mix two behaviours (" +
		ps.Point.Target + " at c=5: 1 of " + plural(ps.Runs, "run") + ", e.g. " + ps.UnsteadyReason + ")."
	for _, f := range []Format{FormatMarkdown, FormatHTML} {
		var buf bytes.Buffer
		if err := Write(&buf, f, j, runs, a); err != nil {
			t.Fatalf("Write(%s) = %v", f, err)
		}
		doc := buf.String()
		if n := strings.Count(doc, unsteadyMark); n != 2 { // the cell, the legend
			t.Errorf("%s has the unsteady mark %d times, want the one cell and its legend:\n%s", f, n, doc)
		}
		if f == FormatMarkdown && !strings.Contains(doc, want) {
			t.Errorf("%s lacks the legend %q:\n%s", f, want, doc)
		}
		if !strings.Contains(doc, ps.UnsteadyReason) {
			t.Errorf("%s lacks the reason %q", f, ps.UnsteadyReason)
		}
	}
}
