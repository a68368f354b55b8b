package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/metric"
)

// The capacity chart's geometry, in points: the sweep chart's width and
// legend column, one panel of latency against offered rate.
const (
	capacityPanelHeight  = 460
	capacityCaptionLines = 3
	// logRateSpan: probes whose rates span more than this factor are
	// drawn on a log rate axis, so a climb from 50 to 20 000 req/s does
	// not crowd its first probes into the axis' first pixels.
	logRateSpan = 10
	// capacityBandAlpha is the opacity of a target's capacity interval,
	// light enough that the probes' marks read through it.
	capacityBandAlpha = 0x38
	// outlineWidth strokes a failed probe's hollow mark: gonum's own
	// outlined glyphs are 0.5 pt, too faint to tell a failed probe by.
	outlineWidth = 1.5
	probeRadius  = 4.5
)

// sloColor draws the SLO's latency bounds: a purple no target colour,
// axis or error colour comes near, so a reader (and a test) tells the
// bound from the data.
func sloColor() color.RGBA { return color.RGBA{0x6A, 0x3D, 0x9A, 0xff} }

// capacityChart is the capacity search's chart: per target each probe's
// p50 and p99 latency against the rate it offered, the SLO's latency
// bounds as horizontal lines, and the capacity found as a line at the
// rate inside its shaded interval. A probe that missed the SLO has a
// hollow mark, one that met it a filled one.
type capacityChart struct {
	title  string
	series []capacitySeries
	// bounds are the SLO's latency objectives, drawn as lines; others
	// the objectives not on a latency axis, named in the caption.
	bounds []job.Threshold
	others []string
	notice string // why there is nothing to draw
}

// capacitySeries is one target's search, drawn in its colour.
type capacitySeries struct {
	job.Capacity
	color color.RGBA
}

// newCapacityChart reads the chart from the job's analysis. The targets
// keep the sweep chart's colours (their index in the spec).
func newCapacityChart(j *job.Job, a job.Analysis) *capacityChart {
	c := &capacityChart{title: title(j) + " · capacity"}
	probes := 0
	for i, cp := range a.Capacity {
		k := slices.IndexFunc(j.Spec.Targets, func(t job.Target) bool { return t.Name == cp.Target })
		if k < 0 {
			k = i
		}
		c.series = append(c.series, capacitySeries{Capacity: cp, color: targetColor(k)})
		probes += len(cp.Probes)
	}
	switch {
	case j.Spec.Search == nil && len(a.Capacity) == 0:
		c.notice = "This job ran no capacity search: its spec has no \"search\"."
		return c
	case probes == 0:
		c.notice = "The capacity search has run no probe yet."
		return c
	}
	if j.Spec.Search != nil {
		slo, err := j.Spec.Search.SLOs()
		if err != nil {
			// Validate refused such a spec; a stored one is drawn
			// without its bounds rather than not at all.
			slo = nil
		}
		for _, t := range slo {
			if m, ok := metric.Lookup(t.Metric); ok && m.Unit == "ms" && t.Value > 0 {
				c.bounds = append(c.bounds, t)
			} else {
				c.others = append(c.others, t.String())
			}
		}
	}
	return c
}

// WriteCapacityChart draws job j's capacity chart (ChartCapacity) from its
// analysis as f: FormatSVG or FormatPNG, else ErrNotAnImage. A job without
// a search, or whose search has no probe yet, is drawn as a chart that
// says so, so a page showing it as an image shows the reason.
func WriteCapacityChart(w io.Writer, f Format, j *job.Job, a job.Analysis) error {
	if j == nil {
		return fmt.Errorf("report: write %s chart: no job", ChartCapacity)
	}
	ch := newCapacityChart(j.Redacted(), a)
	if err := writeChartImage(w, f, ch); err != nil {
		return fmt.Errorf("report: %s chart: %w", ChartCapacity, err)
	}
	return nil
}

func (c *capacityChart) size() (vg.Length, vg.Length) {
	return chartWidth, titleHeight + capacityPanelHeight + capacityCaptionLines*captionLine + 10
}

// panel is the part of dc the plot is drawn in: under the title, above
// the caption, left of the legend column.
func (c *capacityChart) panel(dc draw.Canvas) draw.Canvas {
	bottom := vg.Length(capacityCaptionLines*captionLine + 10)
	return draw.Crop(dc, 4, -legendWidth-4, bottom+4, -titleHeight-4)
}

func (c *capacityChart) draw(dc draw.Canvas) error {
	if c.notice != "" {
		drawNotice(dc, c.title, c.notice)
		return nil
	}
	dc.FillText(textStyle(titleSize, -0.5, -1), vg.Point{X: chartWidth / 2, Y: dc.Max.Y - 8}, c.title)
	p, marks, err := c.plot()
	if err != nil {
		return err
	}
	p.Draw(c.panel(dc))
	l := c.legend(marks)
	l.Draw(draw.Crop(dc, chartWidth-legendWidth, 0, 0, -titleHeight-10))
	notes := []string{
		"Each mark is one probe at the rate it offered: filled met every SLO, hollow missed one; lines join each rate's means.",
		"Shaded: a target's capacity interval [ci_low, ci_high]; the dotted line is the capacity found.",
	}
	if len(c.others) > 0 {
		notes = append(notes, "Also in the SLO, not on this axis: "+joinAnd(c.others)+".")
	}
	cs := textStyle(textSize-1, 0, 0)
	for i, line := range notes {
		dc.FillText(cs, vg.Point{X: 12, Y: vg.Length(10 + (capacityCaptionLines-1-i)*captionLine)}, line)
	}
	return nil
}

// capacityMarks says which marks the chart drew, for its legend.
type capacityMarks struct{ failed, silent, knee bool }

// plot lays out the panel: the capacity intervals behind everything, the
// SLO's bounds, the lines through each rate's means, then the probes'
// marks on top.
func (c *capacityChart) plot() (*plot.Plot, capacityMarks, error) {
	p := plot.New()
	styled(p)
	p.Title.Text = "latency p50 and p99 of each probe against its offered rate"
	p.Y.Label.Text = "latency (ms, log scale)"
	var marks capacityMarks
	c.axes(p)
	for _, s := range c.series {
		if err := addKnee(p, s, &marks); err != nil {
			return nil, marks, fmt.Errorf("capacity of %s: %w", s.Target, err)
		}
	}
	for _, b := range c.bounds {
		if err := addBound(p, b); err != nil {
			return nil, marks, fmt.Errorf("SLO %s: %w", b, err)
		}
	}
	for _, s := range c.series {
		if err := addProbes(p, s, &marks); err != nil {
			return nil, marks, fmt.Errorf("probes of %s: %w", s.Target, err)
		}
	}
	return p, marks, nil
}

// axes sets both axes' ranges: latency on a log axis over every probe's
// p50 and p99 and the SLO's bounds; the offered rate over every probe and
// interval edge, on a log axis when it spans more than logRateSpan.
func (c *capacityChart) axes(p *plot.Plot) {
	lo, hi := math.Inf(1), math.Inf(-1)
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for _, pr := range s.Probes {
			for _, v := range []float64{pr.P50Ms, pr.P99Ms} {
				if v > 0 {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
			if pr.Rate > 0 {
				xlo, xhi = min(xlo, pr.Rate), max(xhi, pr.Rate)
			}
		}
		for _, v := range []float64{s.Rate, s.CILow, s.CIHigh} {
			if v > 0 {
				xlo, xhi = min(xlo, v), max(xhi, v)
			}
		}
	}
	for _, b := range c.bounds {
		lo, hi = min(lo, b.Value), max(hi, b.Value)
	}
	latencyAxis(p, lo, hi)
	if math.IsInf(xlo, 1) {
		xlo, xhi = 1, 10
	}
	if xhi > logRateSpan*xlo {
		p.X.Label.Text = "offered rate (req/s, log scale)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
		p.X.Min, p.X.Max = logFloor(xlo), logCeil(xhi)
		return
	}
	p.X.Label.Text = "offered rate (req/s)"
	p.X.Min, p.X.Max = 0, xhi*1.08
}

// addKnee shades s's capacity interval, where both its edges are known,
// and draws a dotted line at the capacity found with its rate above.
func addKnee(p *plot.Plot, s capacitySeries, marks *capacityMarks) error {
	if s.CILow > 0 && s.CIHigh > s.CILow {
		band, err := plotter.NewPolygon(plotter.XYs{{X: s.CILow, Y: p.Y.Min}, {X: s.CIHigh, Y: p.Y.Min},
			{X: s.CIHigh, Y: p.Y.Max}, {X: s.CILow, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		band.Color = bandColor(s.color)
		band.LineStyle.Width = 0
		p.Add(band)
	}
	if s.Rate <= 0 {
		return nil
	}
	marks.knee = true
	line, err := plotter.NewLine(plotter.XYs{{X: s.Rate, Y: p.Y.Min}, {X: s.Rate, Y: p.Y.Max}})
	if err != nil {
		return err
	}
	line.LineStyle = kneeStyle(s.color)
	p.Add(line)
	// At the foot of the line: the failed probes' marks crowd its top.
	label, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: s.Rate, Y: p.Y.Min}},
		Labels: []string{analysis.Thousands(s.Rate) + " req/s"}})
	if err != nil {
		return err
	}
	label.TextStyle[0] = textStyle(tickSize, 0, 0)
	label.TextStyle[0].Color = s.color
	label.Offset = vg.Point{X: 4, Y: 4}
	p.Add(label)
	return nil
}

func bandColor(c color.RGBA) color.NRGBA {
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: capacityBandAlpha}
}

func kneeStyle(c color.RGBA) draw.LineStyle {
	return draw.LineStyle{Color: c, Width: 2, Dashes: []vg.Length{2, 3}}
}

func sloStyle() draw.LineStyle {
	return draw.LineStyle{Color: sloColor(), Width: 1.5, Dashes: []vg.Length{8, 4}}
}

// addBound draws one latency objective across the panel, named at its
// left end, where the low rates' latencies are well under it.
func addBound(p *plot.Plot, b job.Threshold) error {
	line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: b.Value}, {X: p.X.Max, Y: b.Value}})
	if err != nil {
		return err
	}
	line.LineStyle = sloStyle()
	p.Add(line)
	label, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: p.X.Min, Y: b.Value}},
		Labels: []string{"SLO " + b.String()}})
	if err != nil {
		return err
	}
	label.TextStyle[0] = textStyle(tickSize, 0, 0)
	label.TextStyle[0].Color = sloColor()
	label.Offset = vg.Point{X: 4, Y: 3}
	p.Add(label)
	return nil
}

// addProbes draws s's probes: for p50 (circles) and p99 (triangles) a
// line through each rate's mean, then every probe's mark, filled where it
// met the SLO and hollow where it missed. A probe where nothing completed
// has no latency for a log axis: a cross in the errors' colour on the
// axis marks it.
func addProbes(p *plot.Plot, s capacitySeries, marks *capacityMarks) error {
	probes := slices.Clone(s.Probes)
	slices.SortStableFunc(probes, func(x, y job.CapacityProbe) int { return cmp.Compare(x.Rate, y.Rate) })
	var silent plotter.XYs
	for _, pct := range []string{"50", "99"} {
		lat := func(pr job.CapacityProbe) float64 {
			if pct == "99" {
				return pr.P99Ms
			}
			return pr.P50Ms
		}
		if line := rateMeans(probes, lat); len(line) > 1 {
			l, err := plotter.NewLine(line)
			if err != nil {
				return err
			}
			l.Color, l.Width = s.color, 1.2
			if pct == "99" {
				l.Dashes = []vg.Length{latencyDash, latencyDash}
			}
			p.Add(l)
		}
		var met, missed plotter.XYs
		for _, pr := range probes {
			v := lat(pr)
			switch {
			case v <= 0:
				if pct == "50" {
					silent = append(silent, plotter.XY{X: pr.Rate, Y: p.Y.Min})
				}
			case pr.Passed:
				met = append(met, plotter.XY{X: pr.Rate, Y: v})
			default:
				missed = append(missed, plotter.XY{X: pr.Rate, Y: v})
			}
		}
		for _, set := range []struct {
			xys    plotter.XYs
			passed bool
		}{{met, true}, {missed, false}} {
			if len(set.xys) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(set.xys)
			if err != nil {
				return err
			}
			sc.GlyphStyle = probeGlyph(s.color, pct == "99", set.passed)
			p.Add(sc)
			marks.failed = marks.failed || !set.passed
		}
	}
	if len(silent) > 0 {
		sc, err := plotter.NewScatter(silent)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: errorColor(), Radius: probeRadius, Shape: draw.CrossGlyph{}}
		p.Add(sc)
		marks.silent = true
	}
	return nil
}

// rateMeans is, at each rate probed (probes sorted by rate), the mean of
// lat over its probes that measured one.
func rateMeans(probes []job.CapacityProbe, lat func(job.CapacityProbe) float64) plotter.XYs {
	var out plotter.XYs
	for i := 0; i < len(probes); {
		k, sum, n := i, 0.0, 0
		for ; k < len(probes) && probes[k].Rate == probes[i].Rate; k++ {
			if v := lat(probes[k]); v > 0 {
				sum, n = sum+v, n+1
			}
		}
		if n > 0 {
			out = append(out, plotter.XY{X: probes[i].Rate, Y: sum / float64(n)})
		}
		i = k
	}
	return out
}

// probeGlyph is a probe's mark: a circle for p50, a triangle for p99,
// filled where the probe met the SLO and hollow where it missed.
func probeGlyph(c color.Color, p99, passed bool) draw.GlyphStyle {
	g := draw.GlyphStyle{Color: c, Radius: probeRadius}
	switch {
	case passed && p99:
		g.Shape = draw.PyramidGlyph{}
	case passed:
		g.Shape = draw.CircleGlyph{}
	default:
		g.Shape = outlineGlyph{triangle: p99}
	}
	return g
}

// outlineGlyph draws a circle's or a triangle's outline outlineWidth
// wide, the triangle as draw.PyramidGlyph's.
type outlineGlyph struct{ triangle bool }

func (o outlineGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: outlineWidth})
	var path vg.Path
	if o.triangle {
		const sin30, cos30 = 0.5, 0.8660254037844386
		r := sty.Radius + (sty.Radius-sty.Radius*sin30)/2
		path.Move(vg.Point{X: pt.X, Y: pt.Y + r})
		path.Line(vg.Point{X: pt.X - r*cos30, Y: pt.Y - r*sin30})
		path.Line(vg.Point{X: pt.X + r*cos30, Y: pt.Y - r*sin30})
	} else {
		path.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
		path.Arc(pt, sty.Radius, 0, 2*math.Pi)
	}
	path.Close()
	c.Stroke(path)
}

// legend names each target's colour, the marks and the lines drawn.
func (c *capacityChart) legend(marks capacityMarks) plot.Legend {
	l := plot.NewLegend()
	l.TextStyle = textStyle(textSize, 0, 0)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = 18
	l.Padding = 6
	for _, s := range c.series {
		l.Add(s.Target, swatch(s.color))
	}
	black := color.Black
	l.Add("p50 latency", glyphThumb{probeGlyph(black, false, true)})
	l.Add("p99 latency", glyphThumb{probeGlyph(black, true, true)})
	if marks.failed {
		l.Add("missed the SLO", glyphThumb{probeGlyph(black, false, false)})
	}
	if marks.silent {
		l.Add("nothing completed", glyphThumb{draw.GlyphStyle{Color: errorColor(), Radius: probeRadius, Shape: draw.CrossGlyph{}}})
	}
	if len(c.bounds) > 0 {
		l.Add("SLO bound", lineThumb(sloStyle()))
	}
	if marks.knee {
		l.Add("capacity found", lineThumb(kneeStyle(color.RGBA{A: 0xff})))
	}
	return l
}

// lineThumb is a legend thumbnail: a line in a style.
type lineThumb draw.LineStyle

func (t lineThumb) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(draw.LineStyle(t), c.Min.X, y, c.Max.X, y)
}

// joinAnd lists items as a reader does: "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	s := items[0]
	for _, it := range items[1 : len(items)-1] {
		s += ", " + it
	}
	return s + " and " + items[len(items)-1]
}
