package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/benchq/benchq/internal/job"
)

// slice is one requests/duration/rate value of a sweep: the unit of one
// Markdown table, one SVG row and one gnuplot data block.
type slice struct {
	Requests int
	Duration job.Duration
	Rate     float64
	RateTo   float64 // where a ramp ends; 0 for a fixed rate
}

func sliceOf(p job.Point) slice {
	return slice{Requests: p.Requests, Duration: p.Duration, Rate: p.Rate, RateTo: p.RateTo}
}

// Label names the slice as ab's flags would: "requests = 1000",
// "duration = 10s", "rate = 500/s", and a ramp by its range, "rate =
// 100→5000/s".
func (s slice) Label() string {
	switch {
	case s.Rate > 0:
		return "rate = " + rateRange(s.Rate, s.RateTo) + "/s"
	case s.Duration > 0:
		return "duration = " + s.Duration.String()
	}
	return "requests = " + strconv.Itoa(s.Requests)
}

// grid is the analysis laid out as seeds/003 lays out its tables: per
// slice, rows = targets, columns = concurrency.
type grid struct {
	Targets []string // in the spec's order
	Slices  []slice  // ascending requests, duration, rate
	// Conc lists the concurrency levels of each slice, ascending.
	Conc  map[slice][]int
	cells map[cellKey]*job.PointSummary
}

type cellKey struct {
	slice       slice
	target      string
	concurrency int
}

// newGrid indexes the analysis' point summaries. Targets keep the spec's
// order (TargetIndex), so the baseline the user listed first stays first.
func newGrid(a job.Analysis) grid {
	g := grid{Conc: map[slice][]int{}, cells: map[cellKey]*job.PointSummary{}}
	points := slices.Clone(a.Points)
	slices.SortStableFunc(points, func(x, y job.PointSummary) int {
		return cmp.Compare(x.Point.TargetIndex, y.Point.TargetIndex)
	})
	for i := range points {
		ps := &points[i]
		s := sliceOf(ps.Point)
		if !slices.Contains(g.Targets, ps.Point.Target) {
			g.Targets = append(g.Targets, ps.Point.Target)
		}
		if !slices.Contains(g.Slices, s) {
			g.Slices = append(g.Slices, s)
		}
		if !slices.Contains(g.Conc[s], ps.Point.Concurrency) {
			g.Conc[s] = append(g.Conc[s], ps.Point.Concurrency)
		}
		g.cells[cellKey{s, ps.Point.Target, ps.Point.Concurrency}] = ps
	}
	slices.SortFunc(g.Slices, func(x, y slice) int {
		return cmp.Or(cmp.Compare(x.Requests, y.Requests), cmp.Compare(x.Duration, y.Duration), cmp.Compare(x.Rate, y.Rate),
			cmp.Compare(x.RateTo, y.RateTo))
	})
	for _, cs := range g.Conc {
		slices.Sort(cs)
	}
	return g
}

// Cell returns the summary of one point, or nil when it has no runs.
func (g grid) Cell(s slice, target string, c int) *job.PointSummary {
	return g.cells[cellKey{s, target, c}]
}

// rateRange is a point's rate as a reader reads it: "500", or a ramp's
// range "100→5000".
func rateRange(from, to float64) string {
	s := strconv.FormatFloat(from, 'f', -1, 64)
	if to > 0 && to != from {
		s += "→" + strconv.FormatFloat(to, 'f', -1, 64)
	}
	return s
}

// concLabel is a column heading as seeds/003 writes it.
func concLabel(c int) string { return fmt.Sprintf("c=%d", c) }
