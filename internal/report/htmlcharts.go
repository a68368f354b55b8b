package report

import (
	"bytes"
	"cmp"
	"html/template"
	"slices"

	"github.com/benchq/benchq/internal/job"
)

// The HTML report's runs' charts are inline SVG, so the file stays one
// file; these bound what a sweep of many runs adds to it.
const (
	// maxChartedRuns is the most runs drawn. Every point's first repeat
	// comes before any second repeat, so a long sweep shows each point
	// once before it shows repeats.
	maxChartedRuns = 24
	// htmlChartIntervals is the most points of an inline timeline's line
	// (the API's charts keep maxChartIntervals).
	htmlChartIntervals = 150
	// maxOpenCharts: up to this many runs, their charts are unfolded.
	maxOpenCharts = 4
)

// inlineRunCharts are one run's charts as inline SVG; either may be
// empty, for a run stored without a timeline or a histogram. Note says
// why a run's charts could not be drawn.
type inlineRunCharts struct {
	ID           string
	Header       string
	Timeline     template.HTML
	Distribution template.HTML
	Note         string
}

// htmlRunCharts draws the timeline and distribution of the job's runs,
// in runViews' order, at most maxChartedRuns of them; uncharted counts the
// runs left out. A run stored with neither a measurement nor a histogram
// (before runs kept them) is left out and not counted.
func htmlRunCharts(j *job.Job, runs []job.Run) (charts []inlineRunCharts, uncharted int) {
	views := runViews(j, runs)
	chosen := slices.Clone(views)
	slices.SortStableFunc(chosen, func(x, y runView) int {
		return cmp.Or(cmp.Compare(x.Repeat, y.Repeat), cmp.Compare(x.Point.Index, y.Point.Index))
	})
	drawn := map[job.RunKey]inlineRunCharts{}
	for _, rv := range chosen {
		switch {
		case len(rv.Measurement) == 0 && rv.Result.LatencyHistogram == "":
			// Nothing stored to draw from.
		case len(drawn) == maxChartedRuns:
			uncharted++
		default:
			drawn[rv.RunKey] = inlineCharts(j, rv)
		}
	}
	for _, rv := range views {
		if c, ok := drawn[rv.RunKey]; ok {
			charts = append(charts, c)
		}
	}
	return charts, uncharted
}

// inlineCharts draws one run's charts, those it has what to draw from.
func inlineCharts(j *job.Job, rv runView) inlineRunCharts {
	c := inlineRunCharts{ID: RunID(rv.RunKey), Header: runTitle(j, rv.Run)}
	tl, err := newTimelineChart(j, rv.Run, htmlChartIntervals)
	if err == nil && tl.series != nil {
		c.Timeline, err = inlineChart(tl, "requests per second and latency percentiles over time, "+c.Header)
	}
	if err != nil {
		c.Note = "The run's stored measurement could not be read, so it is not charted."
		return c
	}
	dist, err := newDistributionChart(j, rv.Run)
	if err == nil && len(dist.curves) > 0 {
		c.Distribution, err = inlineChart(dist, "latency by percentile, "+c.Header)
	}
	if err != nil {
		c.Note = "The run's latency histogram could not be read, so its distribution is not charted."
	}
	if c.Timeline == "" && c.Distribution == "" && c.Note == "" {
		c.Note = "This run completed no request to chart."
	}
	return c
}

func inlineChart(ch runChart, label string) (template.HTML, error) {
	var buf bytes.Buffer
	if err := writeRunSVG(&buf, ch); err != nil {
		return "", err
	}
	return template.HTML(inlineSVGLabelled(buf.String(), label)), nil //nolint:gosec // vgsvg escapes every string it draws
}
