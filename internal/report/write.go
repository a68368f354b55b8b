package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/benchq/benchq/internal/job"
)

// Write renders a job's report in format f. runs are the job's stored runs
// in any order; a is the job's analysis (analysis.Analyze), from which the
// tables, charts and comparisons are drawn. A job still running renders
// what is stored so far. Every format renders the job's redacted spec
// (job.Spec.Redacted): a report is an artifact, kept and passed around
// where a target's token must not travel.
func Write(w io.Writer, f Format, j *job.Job, runs []job.Run, a job.Analysis) error {
	if j == nil {
		return fmt.Errorf("report: write %s: no job", f)
	}
	j = j.Redacted()
	var err error
	switch f {
	case FormatAB:
		err = writeAB(w, j, runs)
	case FormatHTTPLoad:
		err = writeHTTPLoad(w, j, runs)
	case FormatJSON:
		err = writeJSON(w, j, runs, a)
	case FormatCSV:
		err = writeCSV(w, j, runs)
	case FormatMarkdown:
		err = writeMarkdown(w, j, runs, a)
	case FormatSVG:
		err = writeSVG(w, j, a)
	case FormatPNG:
		err = writePNG(w, j, a)
	case FormatHTML:
		err = writeHTML(w, j, runs, a)
	case FormatGnuplot:
		err = writeGnuplot(w, j, a)
	case FormatTimelineCSV:
		err = writeTimelineCSV(w, j, runs)
	case FormatTimelineNDJSON:
		err = writeTimelineNDJSON(w, j, runs)
	case FormatHGRM:
		err = writeHGRM(w, j, runs)
	case FormatJUnit:
		err = writeJUnit(w, j, runs, a)
	default:
		return fmt.Errorf("%w %q", ErrUnknownFormat, string(f))
	}
	if err != nil {
		return fmt.Errorf("report: write %s: %w", f, err)
	}
	return nil
}

// runView is a run with its point spelled out, as every per-run format
// prints it.
type runView struct {
	job.Run
	Point   job.Point
	Repeats int
}

// runViews orders the runs by point then repeat (the store's order is the
// schedule's, which interleaves targets) and joins each to its point.
// Runs without a result, or naming a point the spec does not have, are
// skipped: there is nothing to print for them.
func runViews(j *job.Job, runs []job.Run) []runView {
	points := j.Spec.Points()
	repeats := j.Spec.Sweep.Repeats
	out := make([]runView, 0, len(runs))
	for _, r := range runs {
		if r.Result == nil || r.Point < 0 || r.Point >= len(points) {
			continue
		}
		out = append(out, runView{Run: r, Point: points[r.Point], Repeats: repeats})
	}
	slices.SortStableFunc(out, func(x, y runView) int {
		return cmp.Or(cmp.Compare(x.Point.Index, y.Point.Index), cmp.Compare(x.Repeat, y.Repeat))
	})
	return out
}

// stopFlag names how a point stops, as ab's flags would: "n=1000",
// "t=10s", "rate=500/s", a ramp by its range: "rate=100→5000/s".
func stopFlag(p job.Point) string {
	switch {
	case p.Rate > 0:
		return "rate=" + rateRange(p.Rate, p.RateTo) + "/s"
	case p.Duration > 0:
		return "t=" + p.Duration.String()
	}
	return fmt.Sprintf("n=%d", p.Requests)
}

// header is the line that precedes each run's text, in the style of
// tail(1) over several files: "==> target apache, c=50, n=1000, repeat 3/10 <==".
func (v runView) header() string {
	partial := ""
	switch {
	case v.Partial:
		partial = ", partial: stopped by the job's cancel"
	case v.Aborted:
		partial = fmt.Sprintf(", aborted by threshold %q: %s", v.AbortedBy, v.AbortReason)
	}
	return fmt.Sprintf("==> target %s, c=%d, %s, repeat %d/%d%s <==",
		v.Point.Target, v.Point.Concurrency, stopFlag(v.Point), v.Repeat+1, v.Repeats, partial)
}
