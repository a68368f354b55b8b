package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/benchq/benchq/internal/job"
)

// The HTML report is one file a person can attach to a ticket: the
// stylesheet is embedded and inlined, the chart is inline SVG, and nothing
// is fetched from anywhere.
var (
	//go:embed html/report.css
	reportCSS string
	//go:embed html/report.html.tmpl
	reportTmpl   string
	htmlTemplate = template.Must(template.New("report").Parse(reportTmpl))
)

// htmlTable is one table of the report: a caption, a header row and rows
// of cells; Numeric marks columns set right-aligned.
type htmlTable struct {
	Caption string
	Head    []string
	Rows    [][]string
	Note    string
}

type htmlRun struct {
	Header string
	Text   string
}

type htmlReport struct {
	CSS         template.CSS
	Title       string
	JobID       string
	Status      string
	Repeats     int
	Chart       template.HTML
	Tables      []htmlTable
	Saturation  []string
	CompareTo   *htmlTable
	CompareGone string
	Verdict     string
	VerdictMsg  string
	Failures    *htmlTable
	Runs        []htmlRun
}

// writeHTML renders the Markdown report's tables as HTML tables under the
// SVG chart, then each run's ab text folded away. html/template escapes
// every user-chosen string (names, targets, labels); the chart's SVG is
// trusted because vgsvg escapes the text it draws.
func writeHTML(w io.Writer, j *job.Job, runs []job.Run, a job.Analysis) error {
	var svg bytes.Buffer
	if err := writeSVG(&svg, j, a); err != nil {
		return err
	}
	g := newGrid(a)
	r := htmlReport{
		CSS: template.CSS(reportCSS), Title: title(j), JobID: j.ID, Status: string(j.Status),
		Repeats: j.Spec.WithDefaults().Sweep.Repeats,
		Chart:   template.HTML(inlineSVG(svg.String())), //nolint:gosec // vgsvg escapes every string it draws
	}
	for _, s := range g.Slices {
		r.Tables = append(r.Tables, htmlRPSTable(g, s, j.Spec.Baseline))
	}
	for _, s := range a.Saturation {
		r.Saturation = append(r.Saturation, s.Sentence)
	}
	if c := a.CompareTo; c != nil {
		if c.Gone != "" {
			r.CompareGone = fmt.Sprintf("Compared with job %s: %s.", c.JobID, c.Gone)
		} else {
			r.CompareTo = htmlCompareTo(c)
		}
	}
	r.Verdict, r.VerdictMsg, r.Failures = htmlVerdict(a.Verdict, j.Spec.Points())
	for _, v := range runViews(j, runs) {
		var text strings.Builder
		if err := writeAB(&text, j, []job.Run{v.Run}); err != nil {
			return err
		}
		r.Runs = append(r.Runs, htmlRun{Header: v.header(), Text: text.String()})
	}
	return htmlTemplate.Execute(w, r)
}

// inlineSVG drops the XML declaration and generator comment, which have no
// place inside an HTML document.
func inlineSVG(doc string) string {
	if i := strings.Index(doc, "<svg"); i >= 0 {
		doc = doc[i:]
	}
	return strings.Replace(doc, "<svg ", `<svg role="img" aria-label="charts" `, 1)
}

func htmlRPSTable(g grid, s slice, baseline string) htmlTable {
	t := htmlTable{Caption: "mean req/s, " + s.Label(), Head: []string{""}}
	for _, c := range g.Conc[s] {
		t.Head = append(t.Head, concLabel(c))
	}
	marked := false
	for _, target := range g.Targets {
		row := []string{target}
		for _, c := range g.Conc[s] {
			ps := g.Cell(s, target, c)
			row = append(row, rpsCell(ps))
			marked = marked || clientBound(ps)
		}
		t.Rows = append(t.Rows, row)
	}
	if baseline != "" && hasTarget(g, baseline) {
		for _, target := range g.Targets {
			if target == baseline {
				continue
			}
			row := []string{target + " vs " + baseline}
			for _, c := range g.Conc[s] {
				row = append(row, comparisonCell(g.Cell(s, target, c)))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	if marked {
		t.Note = clientMark + " the load generator was short of CPU in at least one repeat: that req/s measures the client, not the server."
	}
	return t
}

func htmlCompareTo(c *job.BaselineComparison) *htmlTable {
	t := &htmlTable{Caption: "compared with job " + c.JobID,
		Head: []string{"target", "point", "req/s", "baseline req/s", "req/s change", "p99 ms", "baseline p99 ms", "p99 change"}}
	for _, cell := range c.Cells {
		row := []string{cell.Point.Target, concLabel(cell.Point.Concurrency) + ", " + stopFlag(cell.Point),
			fmt.Sprintf("%.2f", cell.RPS), "", "no matching cell", fmt.Sprintf("%.2f", cell.P99Ms), "", ""}
		if cmp := cell.Comparison; cmp != nil {
			row[3], row[4] = fmt.Sprintf("%.2f", cell.BaselineRPS), cmp.RPS
			row[6], row[7] = fmt.Sprintf("%.2f", cell.BaselineP99Ms), cmp.P99
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func htmlVerdict(v job.VerdictResult, points []job.Point) (string, string, *htmlTable) {
	result := v.Result
	if result == "" {
		result = job.VerdictNone
	}
	switch {
	case result == job.VerdictNone:
		return result, "No thresholds were set.", nil
	case len(v.Failures) == 0:
		return result, "Every point met every threshold.", nil
	}
	t := &htmlTable{Caption: "failing cells", Head: []string{"threshold", "target", "point", "value", "baseline", "bound"}}
	for _, f := range v.Failures {
		point := ""
		if f.Point >= 0 {
			point = concLabel(f.Concurrency)
		}
		if f.Point >= 0 && f.Point < len(points) {
			point += ", " + stopFlag(points[f.Point])
		}
		value := fmt.Sprintf("%.2f", f.Value)
		if f.Reason != "" {
			value = f.Reason
		}
		t.Rows = append(t.Rows, []string{f.Threshold, f.Target, point, value, optNumber(f.Baseline), optNumber(f.Bound)})
	}
	return result, fmt.Sprintf("%d failing cell(s).", len(v.Failures)), t
}
