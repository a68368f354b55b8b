package report

import (
	"fmt"
	"io"

	"github.com/benchq/benchq/internal/job"
)

// WriteCompareSVG draws a job beside its baseline job in one chart, on one
// scale: every target's bars and latency points appear twice, "name (this
// job)" and "name (baseline)", side by side in each concurrency slot, so a
// difference reads off the same axis instead of two charts' differing
// ones.
func WriteCompareSVG(w io.Writer, j, base *job.Job, a, baseAnalysis job.Analysis) error {
	if j == nil || base == nil {
		return fmt.Errorf("report: compare chart: a job is missing")
	}
	var merged job.Analysis
	add := func(points []job.PointSummary, side int, label string) {
		for _, ps := range points {
			ps.Point.Target += " (" + label + ")"
			ps.Point.TargetIndex = 2*ps.Point.TargetIndex + side
			merged.Points = append(merged.Points, ps)
		}
	}
	add(a.Points, 0, "this job")
	add(baseAnalysis.Points, 1, "baseline")
	title := &job.Job{ID: j.ID, Spec: job.Spec{Name: title(j) + " against " + title(base)}}
	return writeSVG(w, title, merged)
}
