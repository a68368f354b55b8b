package report

import (
	"fmt"
	"image/color"
	"io"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// Trend chart geometry: the job chart's width and fonts, one panel.
const (
	trendHeight    = 480
	trendMaxLabels = 12 // x tick labels shown at most; the others are left blank
	shortCommit    = 7
)

// failColor marks the jobs whose verdict failed.
func failColor() color.RGBA { return color.RGBA{0xD5, 0x5E, 0x00, 0xff} }

// WriteTrendSVG draws a trend series (analysis.TrendSeries: oldest first) as
// SVG in the job charts' style: one line per target and cell over the
// jobs in creation order, each point the cell's mean with ± 1 sd over
// its repeats, a job whose verdict failed ringed, and the commit (else
// the creation time) of each job under the axis.
func WriteTrendSVG(w io.Writer, title, metric string, points []analysis.TrendPoint) error {
	return WriteTrendSVGMarked(w, title, metric, points, nil)
}

// WriteTrendSVGMarked is WriteTrendSVG with change points marked: a
// vertical line just before the first job after each shift, labelled with
// the shift's magnitude, dashed red where nobody acknowledged it yet,
// dotted grey where someone did. A change point whose job is not among
// points is left out.
func WriteTrendSVGMarked(w io.Writer, title, metric string, points []analysis.TrendPoint, marks []job.ChangePoint) error {
	canvas := vgsvg.New(chartWidth, trendHeight)
	dc := draw.New(canvas)
	dc.FillText(textStyle(titleSize, -0.5, -1), vg.Point{X: chartWidth / 2, Y: dc.Max.Y - 8}, title)
	if len(points) == 0 {
		dc.FillText(textStyle(textSize, -0.5, -0.5), vg.Point{X: chartWidth / 2, Y: dc.Max.Y / 2}, "no finished jobs yet")
	} else if err := drawTrend(dc, metric, points, marks); err != nil {
		return err
	}
	return writeScalable(w, canvas)
}

// Change point marks: red dashes for a shift to look at, grey dots for one
// acknowledged as expected.
func changeColor() color.RGBA { return color.RGBA{0xC0, 0x1F, 0x1F, 0xff} }
func ackedColor() color.Gray  { return color.Gray{Y: 0x88} }

// addChangeMarks draws marks on pl over jobs (job id -> x), up to top,
// and names both kinds in the legend.
func addChangeMarks(pl *plot.Plot, legend *plot.Legend, jobs map[string]int, marks []job.ChangePoint, top float64) error {
	var open, acked bool
	for _, cp := range marks {
		x, ok := jobs[cp.JobID]
		if !ok {
			continue
		}
		at := float64(x) - 0.5
		ln, err := plotter.NewLine(plotter.XYs{{X: at, Y: 0}, {X: at, Y: top}})
		if err != nil {
			return fmt.Errorf("change point %s: %w", cp.ID, err)
		}
		text := fmt.Sprintf("%+.1f %%", cp.Magnitude*100)
		if cp.Acknowledged {
			ln.Color, ln.Width, ln.Dashes = ackedColor(), 1.5, []vg.Length{vg.Points(1.5), vg.Points(3)}
			text += " (ack)"
			acked = true
		} else {
			ln.Color, ln.Width, ln.Dashes = changeColor(), 2, []vg.Length{vg.Points(6), vg.Points(3)}
			open = true
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: at, Y: top}}, Labels: []string{"change " + text}})
		if err != nil {
			return fmt.Errorf("change point %s label: %w", cp.ID, err)
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i] = textStyle(textSize-1, -0.5, 0)
		}
		pl.Add(ln, lb)
	}
	if open {
		l, _ := plotter.NewLine(plotter.XYs{{}, {X: 1}})
		l.Color, l.Width, l.Dashes = changeColor(), 2, []vg.Length{vg.Points(6), vg.Points(3)}
		legend.Add("change point", l)
	}
	if acked {
		l, _ := plotter.NewLine(plotter.XYs{{}, {X: 1}})
		l.Color, l.Width, l.Dashes = ackedColor(), 1.5, []vg.Length{vg.Points(1.5), vg.Points(3)}
		legend.Add("change point, acknowledged", l)
	}
	return nil
}

// trendLine is one cell's series.
type trendLine struct {
	name string
	pts  errXYs
	fail plotter.XYs
}

func drawTrend(dc draw.Canvas, metric string, points []analysis.TrendPoint, marks []job.ChangePoint) error {
	jobs, labels := trendJobs(points)
	var lines []*trendLine
	byName := map[string]*trendLine{}
	for _, p := range points {
		name := cellName(p)
		l := byName[name]
		if l == nil {
			l = &trendLine{name: name}
			byName[name] = l
			lines = append(lines, l)
		}
		x := float64(jobs[p.JobID])
		l.pts.XYs = append(l.pts.XYs, plotter.XY{X: x, Y: p.Value})
		lo, hi := spread(p.Stat, 0)
		l.pts.YErrors = append(l.pts.YErrors, struct{ Low, High float64 }{lo, hi})
		if p.Verdict == job.VerdictFail {
			l.fail = append(l.fail, plotter.XY{X: x, Y: p.Value})
		}
	}
	pl := plot.New()
	styled(pl)
	pl.Title.Text = metric + " per job"
	pl.X.Label.Text = "job (commit, else created), oldest first"
	pl.Y.Label.Text = metric
	pl.Y.Min = 0
	pl.X.Min, pl.X.Max = -0.5, float64(len(labels))-0.5
	pl.NominalX(labels...)
	legend := plot.NewLegend()
	legend.TextStyle = textStyle(textSize, 0, 0)
	legend.Top, legend.Left = true, true
	legend.ThumbnailWidth, legend.Padding = 18, 6
	failed := false
	for i, l := range lines {
		ln, err := plotter.NewLine(l.pts.XYs)
		if err != nil {
			return fmt.Errorf("trend line %s: %w", l.name, err)
		}
		ln.Color, ln.Width = targetColor(i), 2
		sc, err := plotter.NewScatter(l.pts.XYs)
		if err != nil {
			return fmt.Errorf("trend points %s: %w", l.name, err)
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: targetColor(i), Radius: 3.5, Shape: draw.CircleGlyph{}}
		pl.Add(ln, sc)
		if hasSpread(l.pts.YErrors) {
			eb, err := plotter.NewYErrorBars(l.pts)
			if err != nil {
				return fmt.Errorf("trend error bars %s: %w", l.name, err)
			}
			eb.Color = errorBarColor()
			pl.Add(eb)
		}
		if len(l.fail) > 0 {
			ring, err := plotter.NewScatter(l.fail)
			if err != nil {
				return fmt.Errorf("trend failures %s: %w", l.name, err)
			}
			ring.GlyphStyle = draw.GlyphStyle{Color: failColor(), Radius: 7, Shape: draw.RingGlyph{}}
			pl.Add(ring)
			failed = true
		}
		legend.Add(l.name, swatch(targetColor(i)))
	}
	if failed {
		legend.Add("verdict failed", glyphThumb{draw.GlyphStyle{Color: failColor(), Radius: 6, Shape: draw.RingGlyph{}}})
	}
	if len(marks) > 0 {
		top := 0.0
		for _, p := range points {
			_, hi := spread(p.Stat, 0)
			top = max(top, p.Value+hi)
		}
		if err := addChangeMarks(pl, &legend, jobs, marks, top*1.08); err != nil {
			return err
		}
	}
	pl.Draw(draw.Crop(dc, 0, -legendWidth, captionLine+10, -titleHeight))
	legend.Draw(draw.Crop(dc, chartWidth-legendWidth, 0, 0, -titleHeight-10))
	caption := "Points: the cell's mean over its repeats. Error bars: ± 1 standard deviation over repeats."
	dc.FillText(textStyle(textSize-1, 0, 0), vg.Point{X: 12, Y: 10}, caption)
	return nil
}

// trendJobs numbers the jobs of points in order, with their axis labels;
// at most trendMaxLabels of them are written, evenly spaced.
func trendJobs(points []analysis.TrendPoint) (map[string]int, []string) {
	idx := map[string]int{}
	var labels []string
	for _, p := range points {
		if _, ok := idx[p.JobID]; ok {
			continue
		}
		idx[p.JobID] = len(labels)
		l := p.CreatedAt.UTC().Format("01-02 15:04")
		if p.Commit != "" {
			l = p.Commit[:min(len(p.Commit), shortCommit)]
		}
		labels = append(labels, l)
	}
	if every := (len(labels) + trendMaxLabels - 1) / trendMaxLabels; every > 1 {
		for i := range labels {
			if i%every != 0 {
				labels[i] = ""
			}
		}
	}
	return idx, labels
}

// cellName names a series: its target, and the concurrency and
// requests/duration/rate of its cell.
func cellName(p analysis.TrendPoint) string {
	parts := []string{p.Target, concLabel(p.Concurrency)}
	switch {
	case p.Requests > 0:
		parts = append(parts, fmt.Sprintf("n=%d", p.Requests))
	case p.Duration > 0:
		parts = append(parts, "t="+p.Duration.String())
	case p.Rate > 0:
		parts = append(parts, fmt.Sprintf("%g/s", p.Rate))
	}
	return strings.Join(parts, " ")
}
