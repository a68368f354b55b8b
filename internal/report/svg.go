package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// Chart geometry, in points, which the SVG's viewBox counts as pixels: a
// 960-wide canvas, 16:9 for a job of one sweep slice, one row of two
// panels per slice below a title, the legend in a column of its own on the
// right so it never covers data, and a caption under the rows.
const (
	chartWidth   = 960
	titleHeight  = 40
	rowHeight    = 460
	captionLines = 3
	captionLine  = 18
	legendWidth  = 170
	groupWidth   = 0.7 // fraction of a concurrency slot a target group fills
	latencyDash  = 4   // dash length of the p99 lines, in points
	titleSize    = 18
	textSize     = 14
	tickSize     = 13
	// errorBarGrey strokes every error bar, so a reader (and a test) tells
	// them from the axes, drawn black, and the target-coloured lines.
	errorBarGrey = 0x33
	pngDPI       = 72 // one point a pixel, as the SVG viewBox counts
)

// chartFont is a sans-serif the renderer measures text with; the SVG names
// the reader's own sans-serif (svgFamilyName) in its place.
func chartFont(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

const svgFamilyName = "system-ui, sans-serif"

func errorBarColor() color.Gray { return color.Gray{Y: errorBarGrey} }

// targetColors are told apart by colour-blind readers (Okabe–Ito); more
// targets than colours reuse them in order.
func targetColors() []color.RGBA {
	return []color.RGBA{
		{0x00, 0x72, 0xB2, 0xff}, {0xE6, 0x9F, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff},
		{0xCC, 0x79, 0xA7, 0xff}, {0x56, 0xB4, 0xE9, 0xff}, {0xD5, 0x5E, 0x00, 0xff},
		{0xF0, 0xE4, 0x42, 0xff}, {0x00, 0x00, 0x00, 0xff},
	}
}

// errorColor fills the part of a bar that is errors, and marks a cell where
// nothing succeeded: a dark red no target colour comes near.
func errorColor() color.RGBA { return color.RGBA{0x8B, 0x0A, 0x0A, 0xff} }

func targetColor(i int) color.RGBA {
	c := targetColors()
	return c[i%len(c)]
}

func chartHeight(g grid) vg.Length {
	return vg.Length(titleHeight + max(len(g.Slices), 1)*rowHeight + captionLines*captionLine + 10)
}

// writeSVG draws the chart as SVG sized by its viewBox, so it scales to
// the width of whatever page holds it.
// writeScalable writes canvas's SVG made scalable (see scalable).
func writeScalable(w io.Writer, canvas *vgsvg.Canvas) error {
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return err
	}
	_, err := w.Write(scalable(buf.Bytes()))
	return err
}

func writeSVG(w io.Writer, j *job.Job, a job.Analysis) error {
	g := newGrid(a)
	canvas := vgsvg.New(chartWidth, chartHeight(g))
	if err := drawChart(draw.New(canvas), j, g); err != nil {
		return err
	}
	return writeScalable(w, canvas)
}

// writePNG draws the same chart as writeSVG at 96 dpi.
func writePNG(w io.Writer, j *job.Job, a job.Analysis) error {
	g := newGrid(a)
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight(g)), vgimg.UseDPI(pngDPI),
		vgimg.UseBackgroundColor(color.White))}
	if err := drawChart(draw.New(c), j, g); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

var (
	svgSize = regexp.MustCompile(`<svg width="[^"]*" height="[^"]*"`)
	svgFont = regexp.MustCompile(`font-family:Liberation Sans;`)
)

// scalable makes gonum's fixed-size SVG fill its container's width (the
// viewBox keeps the aspect ratio) and names a sans-serif every reader has.
func scalable(doc []byte) []byte {
	doc = svgSize.ReplaceAll(doc, []byte(`<svg width="100%"`))
	return svgFont.ReplaceAll(doc, []byte("font-family:"+svgFamilyName+";"))
}

func textStyle(size vg.Length, xa, ya float64) draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: chartFont(size), Handler: plot.DefaultTextHandler,
		XAlign: draw.XAlignment(xa), YAlign: draw.YAlignment(ya)}
}

// drawChart lays out the title, per sweep slice a row of req/s bars and
// latency points, the legend column and the caption.
func drawChart(dc draw.Canvas, j *job.Job, g grid) error {
	dc.FillText(textStyle(titleSize, -0.5, -1), vg.Point{X: chartWidth / 2, Y: dc.Max.Y - 8}, title(j))
	if len(g.Slices) == 0 {
		dc.FillText(textStyle(textSize, -0.5, -0.5), vg.Point{X: chartWidth / 2, Y: dc.Max.Y / 2}, "no runs yet")
		return nil
	}
	body := draw.Crop(dc, 0, -legendWidth, captionLines*captionLine+10, -titleHeight)
	tiles := draw.Tiles{Rows: len(g.Slices), Cols: 2, PadTop: 4, PadBottom: 4, PadLeft: 4, PadRight: 4, PadX: 24, PadY: 20}
	var marked chartMarks
	maxRuns := 0
	for r, s := range g.Slices {
		bars, m, err := rpsPlot(g, s)
		if err != nil {
			return err
		}
		lat, err := latencyPlot(g, s)
		if err != nil {
			return err
		}
		bars.Draw(tiles.At(body, 0, r))
		lat.Draw(tiles.At(body, 1, r))
		marked.client = marked.client || m.client
		marked.noisy = marked.noisy || m.noisy
		for _, t := range g.Targets {
			for _, c := range g.Conc[s] {
				if ps := g.Cell(s, t, c); ps != nil {
					maxRuns = max(maxRuns, ps.Runs)
				}
			}
		}
	}
	drawLegend(draw.Crop(dc, chartWidth-legendWidth, 0, 0, -titleHeight-10), g)
	caption := "Bars and points: mean over repeats. Error bars: ± 1 standard deviation over repeats."
	if maxRuns < 2 {
		caption = "Bars and points: one run each; no repeats, so no error bars."
	}
	cs := textStyle(textSize-1, 0, 0)

	var notes []string
	if marked.client {
		notes = append(notes, clientMark+" load generator short of CPU: that req/s measures the client, not the server.")
	}
	if marked.noisy {
		notes = append(notes, fmt.Sprintf("%s noisy: req/s varied by more than %.0f %% over the repeats.", noisyMark, analysis.NoisyCV*100))
	}
	// The caption, then one line per mark, from the top of the caption
	// band down.
	for i, line := range append([]string{caption}, notes...) {
		dc.FillText(cs, vg.Point{X: 12, Y: vg.Length(10 + (captionLines-1-i)*captionLine)}, line)
	}
	return nil
}

// drawLegend names each target's colour and the two latency glyphs.
func drawLegend(c draw.Canvas, g grid) {
	l := plot.NewLegend()
	l.TextStyle = textStyle(textSize, 0, 0)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = 18
	l.Padding = 6
	for i, t := range g.Targets {
		l.Add(t, swatch(targetColor(i)))
	}
	errs, none := false, false
	for _, s := range g.Slices {
		for _, t := range g.Targets {
			for _, c := range g.Conc[s] {
				if ps := g.Cell(s, t, c); ps != nil && ps.Runs > 0 {
					errs = errs || (!noSuccess(ps) && ps.RPS.Mean > ps.GoodRPS.Mean)
					none = none || noSuccess(ps)
				}
			}
		}
	}
	if errs {
		l.Add("errors (non-2xx)", swatch(errorColor()))
	}
	if none {
		l.Add("nothing succeeded", glyphThumb{draw.GlyphStyle{Color: errorColor(), Radius: 4, Shape: draw.CrossGlyph{}}})
	}
	l.Add("p50 latency", glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: 4, Shape: draw.CircleGlyph{}}})
	l.Add("p99 latency", glyphThumb{draw.GlyphStyle{Color: color.Black, Radius: 4, Shape: draw.PyramidGlyph{}}})
	l.Draw(c)
}

// swatch is a legend thumbnail: a square of the target's colour.
type swatch color.RGBA

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(color.RGBA(s), []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}

type glyphThumb struct{ draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.GlyphStyle, c.Center()) }

// styled gives a panel the chart's fonts and sizes.
func styled(p *plot.Plot) {
	p.Title.TextStyle.Font = chartFont(textSize)
	p.Title.Padding = 6
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = chartFont(textSize)
		ax.Tick.Label.Font = chartFont(tickSize)
	}
	p.Y.Label.Position = draw.PosRight
}

// concTicks label the chart's concurrency slots with the bare number: the
// axis title names it, and "c=128c=256" runs together at ten levels.
func concTicks(cs []int) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strconv.Itoa(c)
	}
	return out
}

// slotX is the x of target i of n in concurrency slot k: the targets of a
// slot sit side by side, centred on the slot.
func slotX(k, i, n int) float64 {
	step := groupWidth / float64(n)
	return float64(k) + step*(float64(i)-float64(n-1)/2)
}

// chartMarks says which cell marks a chart's bars carry, for its legend.
type chartMarks struct{ client, noisy bool }

// errXYs are points with their error bars, for plotter.NewYErrorBars.
type errXYs struct {
	plotter.XYs
	plotter.YErrors
}

// spread is the error bar of a stat: ± 1 sd, floored at lo so a bar never
// crosses zero on a log axis. Nothing with a single run.
func spread(s job.Stat, lo float64) (low, high float64) {
	if s.N < 2 {
		return 0, 0
	}
	return min(s.SD, s.Mean-lo), s.SD
}

// rpsPlot is seeds/003's chart: one bar per target in every concurrency
// slot, side by side, each with its ± 1 sd error bar over repeats. A bar
// is successful req/s; the requests that completed with an error are
// stacked on it in errorColor, and a cell where nothing succeeded has no
// bar but an "✕ errors" mark on the axis. A bar whose load generator was
// short of CPU carries clientMark, a noisy one noisyMark; the marks
// returned say which appear.
func rpsPlot(g grid, s slice) (*plot.Plot, chartMarks, error) {
	p := plot.New()
	styled(p)
	p.Title.Text = "mean successful throughput, " + s.Label()
	p.X.Label.Text = "concurrency (connections)"
	p.Y.Label.Text = "throughput (req/s)"
	conc := g.Conc[s]
	n := len(g.Targets)
	half := groupWidth / float64(n) / 2 * 0.9
	var marked chartMarks
	var errs errXYs
	var failed plotter.XYLabels
	top := 0.0
	for i, t := range g.Targets {
		var bound plotter.XYLabels
		for k, c := range conc {
			ps := g.Cell(s, t, c)
			if ps == nil || ps.Runs == 0 {
				continue
			}
			x, y := slotX(k, i, n), ps.GoodRPS.Mean
			if noSuccess(ps) {
				failed.XYs = append(failed.XYs, plotter.XY{X: x, Y: 0})
				failed.Labels = append(failed.Labels, "✕")
				continue
			}
			if err := addBar(p, x, half, 0, y, targetColor(i)); err != nil {
				return nil, chartMarks{}, fmt.Errorf("bar of %s: %w", t, err)
			}
			stack := y
			if e := ps.RPS.Mean - y; e > 0 {
				if err := addBar(p, x, half, y, y+e, errorColor()); err != nil {
					return nil, chartMarks{}, fmt.Errorf("error bar of %s: %w", t, err)
				}
				stack += e
			}
			lo, hi := spread(ps.GoodRPS, 0)
			if hi > 0 {
				errs.XYs = append(errs.XYs, plotter.XY{X: x, Y: y})
				errs.YErrors = append(errs.YErrors, struct{ Low, High float64 }{lo, hi})
			}
			top = max(top, y+hi, stack)
			var marks []string
			if clientBound(ps) {
				marks, marked.client = append(marks, clientMark), true
			}
			if noisy(ps) {
				marks, marked.noisy = append(marks, noisyMark), true
			}
			if len(marks) > 0 {
				bound.XYs = append(bound.XYs, plotter.XY{X: x, Y: max(y+hi, stack)})
				bound.Labels = append(bound.Labels, strings.Join(marks, " "))
			}
		}
		if len(bound.Labels) > 0 {
			marks, err := plotter.NewLabels(bound)
			if err != nil {
				return nil, chartMarks{}, fmt.Errorf("client marks of %s: %w", t, err)
			}
			for i := range marks.TextStyle {
				marks.TextStyle[i] = textStyle(textSize, -0.5, 0)
			}
			marks.Offset = vg.Point{Y: 3}
			p.Add(marks)
		}
	}
	if len(failed.Labels) > 0 {
		marks, err := plotter.NewLabels(failed)
		if err != nil {
			return nil, chartMarks{}, fmt.Errorf("no-success marks: %w", err)
		}
		for i := range marks.TextStyle {
			marks.TextStyle[i] = textStyle(textSize+2, -0.5, 0)
			marks.TextStyle[i].Color = errorColor()
		}
		marks.Offset = vg.Point{Y: 2}
		p.Add(marks)
	}
	if len(errs.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(errs)
		if err != nil {
			return nil, chartMarks{}, fmt.Errorf("req/s error bars: %w", err)
		}
		eb.Color = errorBarColor()
		eb.LineStyle.Width = 1.2
		eb.CapWidth = 8
		p.Add(eb)
	}
	p.NominalX(concTicks(conc)...)
	p.X.Min, p.X.Max = -0.5, float64(len(conc))-0.5
	p.Y.Min, p.Y.Max = 0, max(top*1.08, 1)
	return p, marked, nil
}

// latencyPlot draws each target's mean p50 (circle) and p99 (triangle)
// latency per concurrency slot, on a log axis so a fast p50 and a slow
// p99 both read. The slots match the bar chart's so the two read together;
// with more than one level, lines join a target's points (solid p50,
// dashed p99). A point with no latency measured (all requests failed) is
// left out: a log axis has no zero.
func latencyPlot(g grid, s slice) (*plot.Plot, error) {
	p := plot.New()
	styled(p)
	p.Title.Text = "latency p50 and p99, " + s.Label()
	p.X.Label.Text = "concurrency (connections)"
	p.Y.Label.Text = "latency (ms, log scale)"
	conc := g.Conc[s]
	n := len(g.Targets)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, t := range g.Targets {
		for _, pct := range []string{"50", "99"} {
			var pts errXYs
			for k, c := range conc {
				ps := g.Cell(s, t, c)
				if ps == nil {
					continue
				}
				st, ok := ps.PercentilesMs[pct]
				if !ok || st.Mean <= 0 {
					continue
				}
				floor := st.Mean / 10
				l, h := spread(st, floor)
				pts.XYs = append(pts.XYs, plotter.XY{X: slotX(k, i, n), Y: st.Mean})
				pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{l, h})
				lo, hi = min(lo, st.Mean-l), max(hi, st.Mean+h)
			}
			if len(pts.XYs) == 0 {
				continue
			}
			if len(pts.XYs) > 1 {
				line, err := plotter.NewLine(pts.XYs)
				if err != nil {
					return nil, fmt.Errorf("latency line of %s: %w", t, err)
				}
				line.Color = targetColor(i)
				line.Width = 1.5
				if pct == "99" {
					line.Dashes = []vg.Length{latencyDash, latencyDash}
				}
				p.Add(line)
			}
			sc, err := plotter.NewScatter(pts.XYs)
			if err != nil {
				return nil, fmt.Errorf("latency points of %s: %w", t, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: targetColor(i), Radius: 5, Shape: draw.CircleGlyph{}}
			if pct == "99" {
				sc.Shape = draw.PyramidGlyph{}
			}
			p.Add(sc)
			if eb, err := plotter.NewYErrorBars(pts); err == nil && hasSpread(pts.YErrors) {
				eb.Color = errorBarColor()
				eb.Width = 1.2
				eb.CapWidth = 6
				p.Add(eb)
			}
		}
	}
	latencyAxis(p, lo, hi)
	p.NominalX(concTicks(conc)...)
	p.X.Min, p.X.Max = -0.5, float64(len(conc))-0.5
	return p, nil
}

func hasSpread(es plotter.YErrors) bool {
	for _, e := range es {
		if e.High > 0 {
			return true
		}
	}
	return false
}

// steps125 are the mantissas of a log axis's ticks: 1, 2 and 5 × 10^n.
var steps125 = [...]float64{1, 2, 5}

// logFloor is the largest 1, 2 or 5 × 10^n at or below v.
func logFloor(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for i := len(steps125) - 1; i >= 0; i-- {
		if steps125[i]*d <= v*(1+1e-9) {
			return steps125[i] * d
		}
	}
	return d
}

// logCeil is the smallest 1, 2 or 5 × 10^n at or above v.
func logCeil(v float64) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range steps125 {
		if m*d >= v*(1-1e-9) {
			return m * d
		}
	}
	return 10 * d
}

// logTicks labels every 1, 2 and 5 × 10^n between min and max, as a
// reader of a latency axis expects: "0.5", "1", "2", "5", "10", ...
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for d := math.Pow(10, math.Floor(math.Log10(lo))); d <= hi*10; d *= 10 {
		for _, m := range steps125 {
			v := m * d
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: tickLabel(v)})
		}
	}
	return ticks
}

func tickLabel(v float64) string {
	return fmt.Sprintf("%g", math.Round(v*1e6)/1e6)
}

// addBar draws one bar of the chart from y0 to y1 around x.
func addBar(p *plot.Plot, x, half, y0, y1 float64, c color.RGBA) error {
	bar, err := plotter.NewPolygon(plotter.XYs{{X: x - half, Y: y0}, {X: x + half, Y: y0}, {X: x + half, Y: y1}, {X: x - half, Y: y1}})
	if err != nil {
		return err
	}
	bar.Color = c
	bar.LineStyle.Width = 0
	p.Add(bar)
	return nil
}

// latencyAxis makes p's y axis a log axis of milliseconds from lo to hi
// (rounded out to powers of ten), or says no latency was measured when
// nothing set lo.
func latencyAxis(p *plot.Plot, lo, hi float64) {
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
		p.Title.Text += ": no latency measured"
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = logFloor(lo), logCeil(hi)
}
