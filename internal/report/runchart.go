package report

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"io"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/benchq/benchq/internal/job"
)

// Chart names one of a job's charts: the sweep's (every point at once, what
// FormatSVG and FormatPNG draw), the capacity search's, or one run's
// timeline or latency distribution.
type Chart string

// The charts Write, WriteCapacityChart and WriteRunChart draw.
const (
	ChartSweep        Chart = "sweep"
	ChartCapacity     Chart = "capacity"
	ChartTimeline     Chart = "timeline"
	ChartDistribution Chart = "distribution"
)

// Errors a caller choosing a chart and a run tells its user about.
var (
	// ErrUnknownChart is returned by ParseChart for a name it does not know.
	ErrUnknownChart = errors.New("unknown chart")
	// ErrUnknownRun is returned by SelectRun for a run id that is malformed
	// or names no stored run, and when a job of several runs names none.
	ErrUnknownRun = errors.New("unknown run")
	// ErrNotAnImage is returned by WriteRunChart for a format that is not
	// an image.
	ErrNotAnImage = errors.New("a run's chart is drawn as svg or png")
)

// Charts lists every chart, the default first.
func Charts() []Chart { return []Chart{ChartSweep, ChartCapacity, ChartTimeline, ChartDistribution} }

// ParseChart reads a chart name as given in ?chart=, case forgiven.
func ParseChart(s string) (Chart, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	names := make([]string, 0, len(Charts()))
	for _, c := range Charts() {
		if string(c) == name {
			return c, nil
		}
		names = append(names, string(c))
	}
	return "", fmt.Errorf("%w %q: want one of %s", ErrUnknownChart, s, strings.Join(names, ", "))
}

// RunID names a run as SelectRun reads it: "POINT:REPEAT", both counted
// from 0 as the results number them.
func RunID(k job.RunKey) string { return strconv.Itoa(k.Point) + ":" + strconv.Itoa(k.Repeat) }

// ParseRunID reads a run id in RunID's form, "POINT:REPEAT"; ok is false
// for anything else.
func ParseRunID(id string) (k job.RunKey, ok bool) {
	p, r, found := strings.Cut(strings.TrimSpace(id), ":")
	point, perr := strconv.Atoi(p)
	repeat, rerr := strconv.Atoi(r)
	if !found || perr != nil || rerr != nil || point < 0 || repeat < 0 {
		return job.RunKey{}, false
	}
	return job.RunKey{Point: point, Repeat: repeat}, true
}

// RunChoiceError says why SelectRun found no run; it wraps ErrUnknownRun.
type RunChoiceError struct {
	ID        string   // as given; "" when none was
	Malformed bool     // ID is not POINT:REPEAT
	Stored    []string // the job's stored runs' ids, by point then repeat
}

func (e *RunChoiceError) Error() string {
	switch {
	case e.Malformed:
		return fmt.Sprintf("%v %q: want POINT:REPEAT", ErrUnknownRun, e.ID)
	case e.ID == "":
		return fmt.Sprintf("%v: none named of %d runs", ErrUnknownRun, len(e.Stored))
	}
	return fmt.Sprintf("%v %q: not stored", ErrUnknownRun, e.ID)
}

func (e *RunChoiceError) Unwrap() error { return ErrUnknownRun }

// SelectRun finds the stored run named id (RunID's form) among runs; ""
// picks the only run of a job that has one. Its errors are
// *RunChoiceError.
func SelectRun(runs []job.Run, id string) (job.Run, error) {
	var stored []job.Run
	for _, r := range runs {
		if r.Result != nil {
			stored = append(stored, r)
		}
	}
	slices.SortFunc(stored, func(x, y job.Run) int {
		return cmp.Or(cmp.Compare(x.Point, y.Point), cmp.Compare(x.Repeat, y.Repeat))
	})
	ids := make([]string, len(stored))
	for i, r := range stored {
		ids[i] = RunID(r.RunKey)
	}
	if id == "" {
		if len(stored) == 1 {
			return stored[0], nil
		}
		return job.Run{}, &RunChoiceError{Stored: ids}
	}
	k, ok := ParseRunID(id)
	if !ok {
		return job.Run{}, &RunChoiceError{ID: id, Malformed: true, Stored: ids}
	}
	for _, run := range stored {
		if run.RunKey == k {
			return run, nil
		}
	}
	return job.Run{}, &RunChoiceError{ID: id, Stored: ids}
}

// WriteRunChart draws chart c (ChartTimeline or ChartDistribution) of run,
// one of job j's stored runs, as f: FormatSVG or FormatPNG, else
// ErrNotAnImage. A run stored without what the chart needs (a timeline, a
// histogram) is drawn as a chart that says so, so a page showing it as an
// image shows the reason.
func WriteRunChart(w io.Writer, f Format, c Chart, j *job.Job, run job.Run) error {
	if j == nil {
		return fmt.Errorf("report: write %s chart: no job", c)
	}
	j = j.Redacted()
	var ch runChart
	var err error
	switch c {
	case ChartTimeline:
		ch, err = newTimelineChart(j, run, maxChartIntervals)
	case ChartDistribution:
		ch, err = newDistributionChart(j, run)
	default:
		return fmt.Errorf("report: %w %q: not a run's chart", ErrUnknownChart, string(c))
	}
	if err != nil {
		return fmt.Errorf("report: %s chart of run %s: %w", c, RunID(run.RunKey), err)
	}
	if err := writeChartImage(w, f, ch); err != nil {
		return fmt.Errorf("report: %s chart of run %s: %w", c, RunID(run.RunKey), err)
	}
	return nil
}

// runChart is one run's chart, ready to draw on a canvas of its size.
type runChart interface {
	size() (w, h vg.Length)
	draw(dc draw.Canvas) error
}

// writeChartImage draws ch as f, SVG or PNG; another format is
// ErrNotAnImage.
func writeChartImage(w io.Writer, f Format, ch runChart) error {
	switch f {
	case FormatSVG:
		return writeRunSVG(w, ch)
	case FormatPNG:
		return writeRunPNG(w, ch)
	}
	return fmt.Errorf("%w, not %s", ErrNotAnImage, f)
}

func writeRunSVG(w io.Writer, ch runChart) error {
	width, height := ch.size()
	canvas := vgsvg.New(width, height)
	if err := ch.draw(draw.New(canvas)); err != nil {
		return err
	}
	return writeScalable(w, canvas)
}

func writeRunPNG(w io.Writer, ch runChart) error {
	width, height := ch.size()
	c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(pngDPI),
		vgimg.UseBackgroundColor(color.White))}
	if err := ch.draw(draw.New(c)); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

// runTitle names a run as a chart's title does: "apache · c=50 · n=1000 ·
// repeat 1/2".
func runTitle(j *job.Job, run job.Run) string {
	points := j.Spec.Points()
	if run.Point < 0 || run.Point >= len(points) {
		return fmt.Sprintf("%s · c=%d · run %s", run.Target, run.Concurrency, RunID(run.RunKey))
	}
	p := points[run.Point]
	s := fmt.Sprintf("%s · %s · %s · repeat %d/%d", p.Target, concLabel(p.Concurrency), stopFlag(p), run.Repeat+1, max(j.Spec.Sweep.Repeats, 1))
	if run.Partial {
		s += " · partial"
	}
	if run.Aborted {
		s += " · aborted"
	}
	return s
}

// drawNotice draws a chart that has nothing to show but why.
func drawNotice(dc draw.Canvas, title, notice string) {
	dc.FillText(textStyle(titleSize, -0.5, -1), vg.Point{X: dc.Max.X / 2, Y: dc.Max.Y - 8}, title)
	dc.FillText(textStyle(textSize, -0.5, -0.5), vg.Point{X: dc.Max.X / 2, Y: dc.Max.Y / 2}, notice)
}
