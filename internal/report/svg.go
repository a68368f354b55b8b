package report

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/benchq/benchq/internal/job"
)

// Chart geometry: one row of two plots per sweep slice.
const (
	chartWidth  = 22 * vg.Centimeter
	rowHeight   = 9 * vg.Centimeter
	groupWidth  = 0.7 // fraction of a concurrency slot the bar group fills
	latencyDash = 4   // dash length of the p99 lines, in points
	// headroom raises the top of the y axis so the legend, drawn in the
	// top left corner, does not hide the data.
	headroom = 1.3
)

// frame pads the x axis half a slot on each side of the nominal slots and
// leaves headroom for the legend.
func frame(p *plot.Plot, slots int) {
	p.X.Min, p.X.Max = -0.5, float64(slots)-0.5
	p.Y.Min = 0
	p.Y.Max *= headroom
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Centimeter / 2
}

// targetColors are told apart by colour-blind readers (Okabe–Ito); more
// targets than colours reuse them in order.
func targetColors() []color.RGBA {
	return []color.RGBA{
		{0x00, 0x72, 0xB2, 0xff}, {0xE6, 0x9F, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff},
		{0xCC, 0x79, 0xA7, 0xff}, {0x56, 0xB4, 0xE9, 0xff}, {0xD5, 0x5E, 0x00, 0xff},
		{0xF0, 0xE4, 0x42, 0xff}, {0x00, 0x00, 0x00, 0xff},
	}
}

func targetColor(i int) color.RGBA {
	c := targetColors()
	return c[i%len(c)]
}

// writeSVG draws, per sweep slice, a grouped bar chart of mean req/s and a
// line chart of mean p50/p99 latency against concurrency, side by side.
func writeSVG(w io.Writer, j *job.Job, a job.Analysis) error {
	g := newGrid(a)
	rows := max(len(g.Slices), 1)
	canvas := vgsvg.New(chartWidth*2, rowHeight*vg.Length(rows))
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: rows, Cols: 2, PadTop: vg.Centimeter / 2, PadBottom: vg.Centimeter / 2,
		PadLeft: vg.Centimeter / 2, PadRight: vg.Centimeter / 2, PadX: vg.Centimeter, PadY: vg.Centimeter}
	if len(g.Slices) == 0 {
		p := plot.New()
		p.Title.Text = title(j) + ": no runs yet"
		p.Draw(tiles.At(dc, 0, 0))
	}
	for r, s := range g.Slices {
		bars, err := rpsPlot(g, s, title(j))
		if err != nil {
			return err
		}
		lines, err := latencyPlot(g, s)
		if err != nil {
			return err
		}
		bars.Draw(tiles.At(dc, 0, r))
		lines.Draw(tiles.At(dc, 1, r))
	}
	_, err := canvas.WriteTo(w)
	return err
}

func concLabels(cs []int) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = concLabel(c)
	}
	return out
}

// rpsPlot is seeds/003's chart: one bar per target in every concurrency
// slot, offset so a slot's bars sit side by side. A bar whose load
// generator was short of CPU carries clientMark, explained in the title.
func rpsPlot(g grid, s slice, name string) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: mean req/s, %s", name, s.Label())
	p.X.Label.Text = "concurrency"
	p.Y.Label.Text = "requests per second"
	conc := g.Conc[s]
	n := len(g.Targets)
	// The plot area is the tile less about 2 cm of axis; split it evenly.
	width := (chartWidth - 2*vg.Centimeter) / vg.Length(len(conc)) * groupWidth / vg.Length(n)
	marked := false
	for i, t := range g.Targets {
		vals := make(plotter.Values, len(conc))
		var bound plotter.XYLabels
		for k, c := range conc {
			ps := g.Cell(s, t, c)
			if ps != nil {
				vals[k] = ps.RPS.Mean
			}
			if clientBound(ps) {
				bound.XYs = append(bound.XYs, plotter.XY{X: float64(k), Y: ps.RPS.Mean})
				bound.Labels = append(bound.Labels, clientMark)
			}
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, fmt.Errorf("bar chart of %s: %w", t, err)
		}
		b.Color = targetColor(i)
		b.LineStyle.Width = 0
		b.Offset = width * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(b)
		p.Legend.Add(t, b)
		if len(bound.Labels) > 0 {
			marks, err := plotter.NewLabels(bound)
			if err != nil {
				return nil, fmt.Errorf("client marks of %s: %w", t, err)
			}
			// Centred over the bar, just above its top.
			marks.Offset = vg.Point{X: b.Offset - vg.Points(3), Y: vg.Points(2)}
			p.Add(marks)
			marked = true
		}
	}
	if marked {
		p.Title.Text += "\n" + clientMark + " load generator short of CPU: req/s measures the client"
	}
	p.NominalX(concLabels(conc)...)
	frame(p, len(conc))
	return p, nil
}

// latencyPlot draws each target's mean p50 (solid) and p99 (dashed)
// latency per concurrency slot; slots match the bar chart's so the two
// read together. Cells without runs leave a gap-free line over the rest.
func latencyPlot(g grid, s slice) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "latency p50 (solid) and p99 (dashed), " + s.Label()
	p.X.Label.Text = "concurrency"
	p.Y.Label.Text = "latency (ms)"
	conc := g.Conc[s]
	for i, t := range g.Targets {
		for _, pct := range []string{"50", "99"} {
			var xys plotter.XYs
			for k, c := range conc {
				if ps := g.Cell(s, t, c); ps != nil {
					xys = append(xys, plotter.XY{X: float64(k), Y: ps.PercentilesMs[pct].Mean})
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("latency line of %s: %w", t, err)
			}
			l.Color = targetColor(i)
			l.Width = vg.Points(1.5)
			if pct == "99" {
				l.Dashes = []vg.Length{vg.Points(latencyDash), vg.Points(latencyDash)}
			}
			p.Add(l)
			p.Legend.Add(t+" p"+pct, l)
		}
	}
	p.NominalX(concLabels(conc)...)
	frame(p, len(conc))
	return p, nil
}
