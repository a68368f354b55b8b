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

// Table is one table of the HTML views: a caption, a header row and rows
// of cells, the first cell of each row naming it.
type Table struct {
	Caption string
	Head    []string
	Rows    [][]string
	Note    string
}

// RepeatsPhrase is the repeat count as a reader says it: "1 repeat",
// "3 repeats".
func (v View) RepeatsPhrase() string { return plural(v.Repeats, "repeat") }

// RunText is one run's ab text under the header line that names its point,
// with the run's id as SelectRun reads it and its title as its charts name
// it ("apache · c=50 · n=1000 · repeat 1/2"), for the links to its charts.
type RunText struct {
	ID     string
	Title  string
	Header string
	Text   string
}

// View is what the HTML report shows besides its chart, ready for a
// template: the Markdown report's tables as Tables, the saturation
// sentences, the comparison with a compare_to job, the verdict with its
// failing cells and each run's ab text. The dashboard renders the same
// View, so a job reads the same in the report and in the browser.
type View struct {
	Title      string
	JobID      string
	Status     string
	Repeats    int
	Tables     []Table
	Saturation []string
	// Capacity is the capacity search's table, CapacitySentence its
	// answer in words (analysis.capacity); nil and "" without a search.
	Capacity         *Table
	CapacitySentence string
	CompareTo        *Table
	CompareGone      string
	// Aborted lists the runs a threshold marked to abort ended early;
	// nil when none was.
	Aborted    *Table
	Verdict    string
	VerdictMsg string
	Failures   *Table
	Runs       []RunText
}

type htmlReport struct {
	View
	CSS   template.CSS
	Chart template.HTML
	// RunCharts are the runs' inline charts in the Runs' order; Uncharted
	// says how many runs were left without, past maxChartedRuns, and
	// OpenCharts whether there are few enough to show them unfolded.
	RunCharts  []inlineRunCharts
	Uncharted  int
	OpenCharts bool
	// CapacityChart is the capacity search's chart, inline; empty
	// without a search.
	CapacityChart template.HTML
}

// NewView builds the View of a job's report from its runs and analysis,
// with the job's secrets redacted as in every report.
func NewView(j *job.Job, runs []job.Run, a job.Analysis) (View, error) {
	if j == nil {
		return View{}, fmt.Errorf("report: view: no job")
	}
	j = j.Redacted()
	g := newGrid(a)
	v := View{Title: title(j), JobID: j.ID, Status: string(j.Status), Repeats: j.Spec.Sweep.Repeats}
	for _, s := range g.Slices {
		v.Tables = append(v.Tables, htmlRPSTable(g, s, j.Spec.ComparisonPairs()))
		head, rows := latencyTable(g, s)
		v.Tables = append(v.Tables, Table{Caption: "latency percentiles (mean ms over repeats) and errors, " + s.Label(), Head: head, Rows: rows})
	}
	for _, s := range a.Saturation {
		v.Saturation = append(v.Saturation, s.Sentence)
	}
	v.Capacity, v.CapacitySentence = capacityTable(a.Capacity), a.CapacitySentence
	if c := a.CompareTo; c != nil {
		if c.Gone != "" {
			v.CompareGone = fmt.Sprintf("Compared with job %s: %s.", c.JobID, c.Gone)
		} else {
			v.CompareTo = htmlCompareTo(c)
		}
	}
	v.Aborted = abortedTable(j, runs)
	v.Verdict, v.VerdictMsg, v.Failures = htmlVerdict(a.Verdict, j.Spec.Points())
	for _, rv := range runViews(j, runs) {
		var text strings.Builder
		if err := writeAB(&text, j, []job.Run{rv.Run}); err != nil {
			return View{}, fmt.Errorf("report: view: %w", err)
		}
		v.Runs = append(v.Runs, RunText{ID: RunID(rv.RunKey), Title: runTitle(j, rv.Run), Header: rv.header(), Text: text.String()})
	}
	return v, nil
}

// writeHTML renders the View under the SVG chart. html/template escapes
// every user-chosen string (names, targets, labels); the chart's SVG is
// trusted because vgsvg escapes the text it draws.
func writeHTML(w io.Writer, j *job.Job, runs []job.Run, a job.Analysis) error {
	var svg bytes.Buffer
	if err := writeSVG(&svg, j, a); err != nil {
		return err
	}
	v, err := NewView(j, runs, a)
	if err != nil {
		return err
	}
	charts, uncharted := htmlRunCharts(j, runs)
	var capacity template.HTML
	if len(a.Capacity) > 0 {
		if capacity, err = inlineChart(newCapacityChart(j, a), "capacity: each probe's p50 and p99 latency against its offered rate"); err != nil {
			return err
		}
	}
	r := htmlReport{
		View:       v,
		CSS:        template.CSS(reportCSS),
		Chart:      template.HTML(InlineSVG(svg.String())), //nolint:gosec // vgsvg escapes every string it draws
		RunCharts:  charts,
		Uncharted:  uncharted,
		OpenCharts: len(charts) <= maxOpenCharts,

		CapacityChart: capacity,
	}
	return htmlTemplate.Execute(w, r)
}

// InlineSVG drops the XML declaration and generator comment, which have no
// place inside an HTML document.
func InlineSVG(doc string) string { return inlineSVGLabelled(doc, "charts") }

// inlineSVGLabelled is InlineSVG naming the image label; label is
// attribute text, escaped here.
func inlineSVGLabelled(doc, label string) string {
	if i := strings.Index(doc, "<svg"); i >= 0 {
		doc = doc[i:]
	}
	return strings.Replace(doc, "<svg ", `<svg role="img" aria-label="`+template.HTMLEscapeString(label)+`" `, 1)
}

func htmlRPSTable(g grid, s slice, pairs []job.ComparisonPair) Table {
	t := Table{Caption: "mean successful req/s, " + s.Label(), Head: []string{""}}
	for _, c := range g.Conc[s] {
		t.Head = append(t.Head, concLabel(c))
	}
	var cells []*job.PointSummary
	for _, target := range g.Targets {
		row := []string{target}
		for _, c := range g.Conc[s] {
			ps := g.Cell(s, target, c)
			row = append(row, rpsCell(ps))
			cells = append(cells, ps)
		}
		t.Rows = append(t.Rows, row)
	}
	notes := cellNotes(cells)
	if rows := comparisonRows(g, s, pairs); len(rows) > 0 {
		t.Rows = append(t.Rows, rows...)
		notes = append([]string{noiseNote}, notes...)
	}
	t.Note = strings.Join(notes, " ")
	if len(g.Conc[s]) > maxHTMLColumns {
		t.transpose()
	}
	return t
}

// maxHTMLColumns is the widest concurrency sweep whose req/s table keeps
// seeds/003's layout (targets as rows) in the HTML views: past it the
// table is turned, one row per concurrency, so that ten levels of
// comparison cells fit a screen instead of scrolling out of sight.
const maxHTMLColumns = 6

// transpose turns the table: its columns become rows.
func (t *Table) transpose() {
	grid := append([][]string{t.Head}, t.Rows...)
	head := make([]string, len(grid))
	for i, r := range grid {
		head[i] = r[0]
	}
	rows := make([][]string, len(t.Head)-1)
	for j := range rows {
		rows[j] = make([]string, len(grid))
		for i, r := range grid {
			rows[j][i] = r[j+1]
		}
	}
	head[0] = "c"
	t.Head, t.Rows = head, rows
}

func htmlCompareTo(c *job.BaselineComparison) *Table {
	t := &Table{Caption: "compared with job " + c.JobID,
		Head: []string{"target", "point", "req/s", "baseline req/s", "req/s change", "p99 ms", "baseline p99 ms", "p99 change"}}
	for _, cell := range c.Cells {
		row := []string{cell.Point.Target, concLabel(cell.Point.Concurrency) + ", " + stopFlag(cell.Point),
			fmt.Sprintf("%.2f", cell.RPS), "", "no matching cell", fmt.Sprintf("%.2f", cell.P99Ms), "", ""}
		if cmp := cell.Comparison; cmp != nil {
			row[3], row[4] = fmt.Sprintf("%.2f", cell.BaselineRPS), sigText(cmp.RPSSignificance, cmp.RPS)
			row[6], row[7] = fmt.Sprintf("%.2f", cell.BaselineP99Ms), sigText(cmp.P99Significance, cmp.P99)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func htmlVerdict(v job.VerdictResult, points []job.Point) (string, string, *Table) {
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
	t := &Table{Caption: "failing cells", Head: []string{"threshold", "target", "point", "value", "baseline", "bound"}}
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
	return result, plural(len(v.Failures), "failing cell") + ".", t
}
