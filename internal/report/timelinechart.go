package report

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
)

// The timeline chart's geometry, in points (pixels of the SVG's viewBox):
// the sweep chart's width, a panel of rates over a panel of latencies
// sharing the time axis, the legend in its own column on the right.
const (
	timelineRatesHeight   = 230
	timelineLatencyHeight = 250
	timelineCaptionLines  = 2
	// maxChartIntervals bounds the points of a line: a longer timeline is
	// coarsened (adjacent intervals merged exactly) until it fits, so a
	// run of hours draws as fast and as small as one of minutes. The HTML
	// report's inline charts keep fewer (htmlChartIntervals).
	maxChartIntervals = 600
)

// The colours of the timeline's series: the sweep chart's palette, each
// series its own so a reader (and a test) tells them apart, errors in the
// errors' dark red and never in a throughput colour.
func successColor() color.RGBA  { return targetColors()[0] }
func intendedColor() color.RGBA { return color.RGBA{0x77, 0x77, 0x77, 0xff} }
func achievedColor() color.RGBA { return targetColors()[3] }
func p50Color() color.RGBA      { return targetColors()[2] }
func p90Color() color.RGBA      { return targetColors()[1] }
func p99Color() color.RGBA      { return targetColors()[5] }

// timelineSeries are the values a timeline chart draws, one per interval
// at the middle of the span it covers: rates per second of that span,
// latencies in ms (0 where the interval completed no request).
type timelineSeries struct {
	interval    time.Duration // as drawn
	stored      time.Duration // as stored, when coarsened to draw
	t           []float64     // s from the run's start
	succeeded   []float64     // 2xx with the expected length, per s
	errors      []float64     // every other attempt that ended, per s
	intended    []float64     // the open model's schedule, per s; nil when closed
	achieved    []float64     // the open model's actual starts, per s
	p50, p90    []float64
	p99         []float64
	lastCovered float64 // s of the last interval the run covered, when less than interval
	// shortTail: lastCovered is under minRateSpan of the interval, too
	// short a span for a rate; the last interval has no rate (NaN).
	shortTail bool
}

// minRateSpan is the least part of its interval the run's last interval
// must cover to have its rates drawn: a run that ends a few ms into an
// interval has a handful of requests there, and a handful over a few ms
// is a rate of thousands that never happened. A run shorter than one
// interval keeps its rate: over its whole span, that is the run's.
const minRateSpan = 0.25

// newTimelineSeries reads m's timeline. Errors count, per interval, the
// completed requests that did not succeed (non-2xx, wrong length) and the
// requests that failed without a response (connect, receive, timeout, …):
// every attempt that ended and was not a success.
// Past maxPoints intervals, adjacent ones are merged (exactly) to draw.
func newTimelineSeries(m *measure.Measurement, maxPoints int) timelineSeries {
	tl := m.Timeline
	s := timelineSeries{interval: tl.Interval, stored: tl.Interval}
	if len(tl.Intervals) > maxPoints {
		tl = tl.Clone()
		for len(tl.Intervals) > maxPoints {
			tl.Coarsen()
		}
		s.interval = tl.Interval
	}
	open := m.Open != nil
	points := abreport.Timeline(tl, open)
	sec := tl.Interval.Seconds()
	// The run ends inside its last interval: that interval's rates are per
	// second of what it covered, not of the whole interval, or every run
	// would seem to slow down at its end.
	end := m.Started.Add(m.Elapsed).Sub(tl.Start).Seconds()
	for i, p := range points {
		span := sec
		if i == len(points)-1 && end > p.TS && end < p.TS+sec {
			span, s.lastCovered = end-p.TS, end-p.TS
		}
		length := int64(0)
		if p.Failures != nil {
			length = p.Failures.Length
		}
		perSecond := 1 / span
		if span < minRateSpan*sec && len(points) > 1 {
			perSecond, s.shortTail = math.NaN(), true
		}
		s.t = append(s.t, p.TS+span/2)
		s.succeeded = append(s.succeeded, float64(p.Succeeded)*perSecond)
		s.errors = append(s.errors, float64(p.Requests-p.Succeeded+p.Failed-length)*perSecond)
		s.p50, s.p90, s.p99 = append(s.p50, p.P50Ms), append(s.p90, p.P90Ms), append(s.p99, p.P99Ms)
		if open {
			iv := &tl.Intervals[i]
			s.intended = append(s.intended, float64(iv.Intended)*perSecond)
			s.achieved = append(s.achieved, float64(iv.Started)*perSecond)
		}
	}
	return s
}

// end is the time axis' end: the last interval's covered end.
func (s timelineSeries) end() float64 {
	n := len(s.t)
	if n == 0 {
		return 1
	}
	sec := s.interval.Seconds()
	if s.lastCovered > 0 {
		return float64(n-1)*sec + s.lastCovered
	}
	return float64(n) * sec
}

// timelineChart is a run's timeline chart: successes and errors per
// second (and the open model's intended and achieved rates) over the
// latency percentiles on a log axis, against time.
type timelineChart struct {
	title  string
	series *timelineSeries
	notice string // why there is no timeline to draw
}

// errNoTimeline says a run was stored before runs recorded a timeline.
var errNoTimeline = errors.New("no timeline")

// newTimelineChart draws at most maxPoints points a line.
func newTimelineChart(j *job.Job, run job.Run, maxPoints int) (*timelineChart, error) {
	c := &timelineChart{title: runTitle(j, run)}
	m, err := runMeasurement(run)
	switch {
	case errors.Is(err, job.ErrNoMeasurement) || errors.Is(err, errNoTimeline):
		c.notice = "This run was stored without a timeline."
		return c, nil
	case err != nil:
		return nil, err
	}
	s := newTimelineSeries(m, maxPoints)
	if len(s.t) == 0 {
		c.notice = "This run completed no request to draw."
		return c, nil
	}
	c.series = &s
	return c, nil
}

// runMeasurement decodes a run's stored measurement, errNoTimeline when
// it holds no timeline.
func runMeasurement(run job.Run) (*measure.Measurement, error) {
	m, err := run.DecodeMeasurement()
	if err != nil {
		return nil, err
	}
	if m.Timeline == nil || m.Timeline.Interval <= 0 {
		return nil, errNoTimeline
	}
	return m, nil
}

func (c *timelineChart) size() (vg.Length, vg.Length) {
	return chartWidth, titleHeight + timelineRatesHeight + timelineLatencyHeight + timelineCaptionLines*captionLine + 10
}

func (c *timelineChart) draw(dc draw.Canvas) error {
	if c.series == nil {
		drawNotice(dc, c.title, c.notice)
		return nil
	}
	s := c.series
	dc.FillText(textStyle(titleSize, -0.5, -1), vg.Point{X: chartWidth / 2, Y: dc.Max.Y - 8}, c.title)
	bottom := vg.Length(timelineCaptionLines*captionLine + 10)
	rates, rateLegend, err := ratesPlot(s)
	if err != nil {
		return err
	}
	lat, latLegend, err := timelineLatencyPlot(s)
	if err != nil {
		return err
	}
	body := draw.Crop(dc, 0, -legendWidth, bottom, -titleHeight)
	split := body.Min.Y + timelineLatencyHeight
	rates.Draw(draw.Crop(body, 4, -4, split-body.Min.Y+8, -4))
	lat.Draw(draw.Crop(body, 4, -4, 4, split-body.Max.Y))
	l := plot.NewLegend()
	l.TextStyle = textStyle(textSize, 0, 0)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = 24
	l.Padding = 6
	for _, e := range append(rateLegend, latLegend...) {
		l.Add(e.name, e.line)
	}
	l.Draw(draw.Crop(dc, chartWidth-legendWidth, 0, 0, -titleHeight-10))
	caption := fmt.Sprintf("One point per %v interval, at the middle of what it covered; a request counts where it ended.", s.interval)
	if s.interval != s.stored {
		caption = fmt.Sprintf("One point per %v: the stored %v intervals merged to draw; a request counts where it ended.", s.interval, s.stored)
	}
	notes := []string{caption}
	switch {
	case s.shortTail:
		notes = append(notes, fmt.Sprintf("The run ended %.2f s into its last interval: too short a span for a rate, so only its latencies are drawn.", s.lastCovered))
	case s.lastCovered > 0:
		notes = append(notes, fmt.Sprintf("The run ended %.2f s into its last interval: that interval's rates are per second of those %.2f s.", s.lastCovered, s.lastCovered))
	}
	cs := textStyle(textSize-1, 0, 0)
	for i, line := range notes {
		dc.FillText(cs, vg.Point{X: 12, Y: vg.Length(10 + (timelineCaptionLines-1-i)*captionLine)}, line)
	}
	return nil
}

// legendLine is a legend entry of the timeline: a series' name and line.
type legendLine struct {
	name string
	line plot.Thumbnailer
}

// ratesPlot draws succeeded and errored requests per second, each its
// own line (an error is never throughput), and in the open model the
// schedule's intended rate and the achieved rate of starts, dashed.
func ratesPlot(s *timelineSeries) (*plot.Plot, []legendLine, error) {
	p := plot.New()
	styled(p)
	p.Title.Text = "requests per second"
	p.Y.Label.Text = "req/s"
	type series struct {
		name   string
		ys     []float64
		c      color.RGBA
		dashed bool
	}
	all := []series{{"succeeded/s", s.succeeded, successColor(), false}, {"errors/s", s.errors, errorColor(), false}}
	if s.intended != nil {
		all = append(all, series{"intended rate", s.intended, intendedColor(), true}, series{"achieved rate", s.achieved, achievedColor(), true})
	}
	top := 0.0
	var legend []legendLine
	for _, se := range all {
		l, err := seriesLine(s.t, se.ys, se.c, se.dashed, false)
		if err != nil {
			return nil, nil, fmt.Errorf("%s line: %w", se.name, err)
		}
		p.Add(l)
		legend = append(legend, legendLine{se.name, l})
		for _, y := range se.ys {
			if !math.IsNaN(y) {
				top = max(top, y)
			}
		}
	}
	p.X.Min, p.X.Max = 0, s.end()
	p.Y.Min, p.Y.Max = 0, max(top*1.08, 1)
	return p, legend, nil
}

// timelineLatencyPlot draws each interval's p50, p90 and p99 on a log
// axis; an interval that completed no request breaks the lines, as a log
// axis has no zero.
func timelineLatencyPlot(s *timelineSeries) (*plot.Plot, []legendLine, error) {
	p := plot.New()
	styled(p)
	p.Title.Text = "latency percentiles per interval"
	p.X.Label.Text = "time since the run's start (s)"
	p.Y.Label.Text = "latency (ms, log scale)"
	lo, hi := math.Inf(1), math.Inf(-1)
	var legend []legendLine
	for _, se := range []struct {
		name string
		ys   []float64
		c    color.RGBA
	}{{"p50", s.p50, p50Color()}, {"p90", s.p90, p90Color()}, {"p99", s.p99, p99Color()}} {
		for _, y := range se.ys {
			if y > 0 {
				lo, hi = min(lo, y), max(hi, y)
			}
		}
		l, err := seriesLine(s.t, se.ys, se.c, false, true)
		if err != nil {
			return nil, nil, fmt.Errorf("%s line: %w", se.name, err)
		}
		p.Add(l)
		legend = append(legend, legendLine{se.name + " latency", l})
	}
	latencyAxis(p, lo, hi)
	p.X.Min, p.X.Max = 0, s.end()
	return p, legend, nil
}

// seriesLine is one series as a line through its points. NaN is no
// value, and with gaps so is 0 or less: the line breaks there (one line
// of several pieces, so the series stays one element of the legend).
func seriesLine(ts, ys []float64, c color.RGBA, dashed, gaps bool) (*brokenLine, error) {
	bl := &brokenLine{}
	var piece plotter.XYs
	flush := func() error {
		if len(piece) == 0 {
			return nil
		}
		l, err := plotter.NewLine(piece)
		if err != nil {
			return err
		}
		bl.pieces = append(bl.pieces, l)
		piece = nil
		return nil
	}
	for i, y := range ys {
		if math.IsNaN(y) || gaps && y <= 0 {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		piece = append(piece, plotter.XY{X: ts[i], Y: y})
	}
	if err := flush(); err != nil {
		return nil, err
	}
	bl.style = draw.LineStyle{Color: c, Width: 1.8}
	if dashed {
		bl.style.Dashes = []vg.Length{6, 4}
	}
	for _, l := range bl.pieces {
		l.LineStyle = bl.style
	}
	return bl, nil
}

// brokenLine is a line drawn in pieces, one style, one legend thumbnail.
type brokenLine struct {
	pieces []*plotter.Line
	style  draw.LineStyle
}

func (b *brokenLine) Plot(c draw.Canvas, p *plot.Plot) {
	for _, l := range b.pieces {
		if len(l.XYs) == 1 {
			// A single point is no line: mark it.
			x, y := p.Transforms(&c)
			c.DrawGlyph(draw.GlyphStyle{Color: b.style.Color, Radius: 2, Shape: draw.CircleGlyph{}}, vg.Point{X: x(l.XYs[0].X), Y: y(l.XYs[0].Y)})
			continue
		}
		l.Plot(c, p)
	}
}

func (b *brokenLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(b.style, c.Min.X, y, c.Max.X, y)
}
