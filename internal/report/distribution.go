package report

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// The distribution chart's height, in points. Its points are the hgrm
// report's (hgrmTicksPerHalfDistance): 5 between 0 and 50 %, 5 between 50
// and 75 %, and so on into the nines.
const distributionHeight = 480

// distributionCurve is one latency distribution as HdrHistogram's plotter
// draws it: x is 1/(1-q), so the axis' decades are the nines (1 = 0 %,
// 10 = 90 %, 100 = 99 %, …), y the latency at q in ms.
type distributionCurve struct {
	name  string
	xys   plotter.XYs
	count int64
	maxMs float64
}

// newDistributionCurve reads h's cumulative distribution; the 100 %
// point, at an infinite x, is left to the caption's max.
func newDistributionCurve(name string, h *hdrhistogram.Histogram) distributionCurve {
	c := distributionCurve{name: name, count: h.TotalCount(), maxMs: float64(h.Max()) / 1000}
	for _, b := range h.CumulativeDistributionWithTicks(hgrmTicksPerHalfDistance) {
		if b.Quantile >= 100 || b.ValueAt <= 0 {
			continue
		}
		c.xys = append(c.xys, plotter.XY{X: 1 / (1 - b.Quantile/100), Y: float64(b.ValueAt) / 1000})
	}
	return c
}

// distributionChart is a run's latency distribution: latency against
// percentile on a log "nines" axis, from the run's full histogram; in the
// open model also the latency from the actual start, beside the
// corrected one (from the intended start).
type distributionChart struct {
	title  string
	curves []distributionCurve
	notice string
}

func newDistributionChart(j *job.Job, run job.Run) (*distributionChart, error) {
	c := &distributionChart{title: runTitle(j, run)}
	m, err := run.DecodeMeasurement()
	switch {
	case err == nil && m.Total.Hist != nil:
		if m.Open != nil && m.Open.Uncorrected.Hist != nil {
			c.curves = append(c.curves, newDistributionCurve("corrected", m.Total.Hist),
				newDistributionCurve("uncorrected", m.Open.Uncorrected.Hist))
		} else {
			c.curves = append(c.curves, newDistributionCurve("latency", m.Total.Hist))
		}
	case err == nil || errors.Is(err, job.ErrNoMeasurement):
		// A run stored without its measurement still has its result's
		// histogram of the total time.
		h, herr := abreport.DecodeHistogram(run.Result)
		if errors.Is(herr, abreport.ErrNoHistogram) {
			c.notice = "This run was stored without a latency histogram."
			return c, nil
		}
		if herr != nil {
			return nil, herr
		}
		c.curves = append(c.curves, newDistributionCurve("latency", h))
	default:
		return nil, err
	}
	if len(c.curves[0].xys) == 0 {
		c.curves, c.notice = nil, "This run completed no request: there is no latency to draw."
	}
	return c, nil
}

func (c *distributionChart) size() (vg.Length, vg.Length) {
	return chartWidth, distributionHeight
}

// distributionStyle: the corrected latency in the first target colour,
// the uncorrected one in grey and dashed, as the lesser view of the two.
func distributionStyle(i int) draw.LineStyle {
	if i == 0 {
		return draw.LineStyle{Color: successColor(), Width: 2}
	}
	return draw.LineStyle{Color: color.RGBA{0x77, 0x77, 0x77, 0xff}, Width: 1.8, Dashes: []vg.Length{6, 4}}
}

func (c *distributionChart) draw(dc draw.Canvas) error {
	if len(c.curves) == 0 {
		drawNotice(dc, c.title, c.notice)
		return nil
	}
	dc.FillText(textStyle(titleSize, -0.5, -1), vg.Point{X: chartWidth / 2, Y: dc.Max.Y - 8}, c.title)
	p := plot.New()
	styled(p)
	p.Title.Text = "latency by percentile"
	p.X.Label.Text = "percentile (log scale of 1/(1 − percentile): the nines)"
	p.Y.Label.Text = "latency (ms, log scale)"
	lo, hi, right := math.Inf(1), math.Inf(-1), 10.0
	l := plot.NewLegend()
	l.TextStyle = textStyle(textSize, 0, 0)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = 24
	l.Padding = 6
	for i, cv := range c.curves {
		if len(cv.xys) == 0 {
			continue
		}
		line, err := plotter.NewLine(cv.xys)
		if err != nil {
			return fmt.Errorf("%s line: %w", cv.name, err)
		}
		line.LineStyle = distributionStyle(i)
		p.Add(line)
		if len(c.curves) > 1 {
			l.Add(cv.name, line)
		}
		for _, xy := range cv.xys {
			lo, hi, right = min(lo, xy.Y), max(hi, xy.Y, cv.maxMs), max(right, xy.X)
		}
	}
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ninesTicks{}
	p.X.Min, p.X.Max = 1, math.Pow(10, math.Ceil(math.Log10(right)-1e-9))
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = logFloor(lo), logCeil(hi)
	lines := 1
	if len(c.curves) > 1 {
		lines = 2
	}
	p.Draw(draw.Crop(dc, 4, -4-legendWidth, vg.Length(lines*captionLine+10), -titleHeight))
	l.Draw(draw.Crop(dc, chartWidth-legendWidth, 0, 0, -titleHeight-10))
	first := c.curves[0]
	notes := []string{fmt.Sprintf("%s, max %s ms; drawn as HdrHistogram's plotter draws a .hgrm file.", plural(int(first.count), "request"), tickLabel(first.maxMs))}
	if len(c.curves) > 1 {
		notes = append(notes, "The open model: corrected latency counts from each request's intended start, uncorrected from its actual start.")
	}
	for i, line := range notes {
		dc.FillText(textStyle(textSize-1, 0, 0), vg.Point{X: 12, Y: vg.Length(10 + (lines-1-i)*captionLine)}, line)
	}
	return nil
}

// ninesTicks labels a log axis of 1/(1-q) with the percentiles its
// decades stand for: 0 %, 90 %, 99 %, 99.9 %, …
type ninesTicks struct{}

func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for d := 0; math.Pow(10, float64(d)) <= hi*(1+1e-9); d++ {
		v := math.Pow(10, float64(d))
		if v < lo*(1-1e-9) {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: ninesLabel(d)})
		// Unlabelled minor ticks at 2 and 5 within the decade.
		for _, m := range []float64{2, 5} {
			if mv := m * v; mv <= hi*(1+1e-9) {
				ticks = append(ticks, plot.Tick{Value: mv})
			}
		}
	}
	return ticks
}

// ninesLabel is the percentile at 10^d on a nines axis: "0%", "90%",
// "99%", "99.9%", …
func ninesLabel(d int) string {
	if d == 0 {
		return "0%"
	}
	return strconv.FormatFloat(100-100/math.Pow(10, float64(d)), 'f', max(d-2, 0), 64) + "%"
}
