package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// RunTimeline is what happened during one run, interval by interval, as a
// reader gets it: the intervals' length and each interval's counts, rates
// and latency percentiles (abreport.Timeline). Interval i starts at
// i × interval_s seconds from the run's start; the intervals' counts add up
// to the run's exactly.
type RunTimeline struct {
	IntervalS float64 `json:"interval_s" example:"1"`
	// LatencyErrorPct: an interval's percentiles are read from a compact
	// histogram, at most this much above the recorded latency (6.25, or
	// 12.5 or 25 where a long, fast run was stored coarser to stay within
	// its bound); the run's own percentiles are exact to 0.1 %.
	LatencyErrorPct float64                  `json:"latency_error_pct" example:"6.25"`
	Intervals       []abreport.TimelinePoint `json:"intervals"`
}

// TimelineOf reads run r's timeline from its stored measurement; nil and
// no error for a run stored without a measurement or a timeline (by a
// worker older than either), an error for a measurement that does not
// decode.
func TimelineOf(r *job.Run) (*RunTimeline, error) {
	m, err := r.DecodeMeasurement()
	if errors.Is(err, job.ErrNoMeasurement) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("report: timeline: %w", err)
	}
	if m.Timeline == nil || m.Timeline.Interval <= 0 {
		return nil, nil
	}
	return &RunTimeline{IntervalS: m.Timeline.Interval.Seconds(), LatencyErrorPct: m.Timeline.LatencyErrorPct(),
		Intervals: abreport.TimelineOf(m)}, nil
}

// timelineRow is one line of the timeline formats: the run it belongs to,
// named as the CSV format names a run (point and repeat from 0, as in the
// JSON results), then the interval. The point's stop condition is one
// column, "stop" ("n=1000", "t=10s", "rate=500/s"), because the interval
// has a "requests" of its own.
type timelineRow struct {
	Target      string `json:"target"`
	Point       int    `json:"point"`
	Concurrency int    `json:"concurrency"`
	Stop        string `json:"stop"`
	Repeat      int    `json:"repeat"`
	abreport.TimelinePoint
}

func timelineRunColumns() []string {
	return []string{"target", "point", "concurrency", "stop", "repeat"}
}

// eachTimelineRow calls row for every interval of every run that has a
// timeline, runs ordered by point then repeat.
func eachTimelineRow(j *job.Job, runs []job.Run, row func(timelineRow) error) error {
	for _, v := range runViews(j, runs) {
		tl, err := TimelineOf(&v.Run)
		if err != nil {
			return fmt.Errorf("point %d repeat %d: %w", v.Point.Index, v.Repeat, err)
		}
		if tl == nil {
			continue
		}
		for _, p := range tl.Intervals {
			r := timelineRow{Target: v.Point.Target, Point: v.Point.Index, Concurrency: v.Point.Concurrency,
				Stop: stopFlag(v.Point), Repeat: v.Repeat, TimelinePoint: p}
			if err := row(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeTimelineCSV writes one row per interval per run: the run's columns,
// then every field of abreport.TimelinePoint under its JSON name (nested
// failure classes as failures_<class>; the open model's fields empty for a
// closed-model run). The interval columns come from the type by
// reflection, as the CSV format's do, so a field added there appears here.
func writeTimelineCSV(w io.Writer, j *job.Job, runs []job.Run) error {
	cw := csv.NewWriter(w)
	head := timelineRunColumns()
	for _, c := range flatten(reflect.ValueOf(abreport.TimelinePoint{}), "") {
		head = append(head, c.name)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	err := eachTimelineRow(j, runs, func(r timelineRow) error {
		row := []string{textCell(r.Target), strconv.Itoa(r.Point), strconv.Itoa(r.Concurrency), r.Stop, strconv.Itoa(r.Repeat)}
		for _, c := range flatten(reflect.ValueOf(r.TimelinePoint), "") {
			row = append(row, c.value)
		}
		return cw.Write(row)
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// writeTimelineNDJSON writes one JSON object per interval per run and
// line: the run's fields, then the interval's as /results?timeline=true
// shows them.
func writeTimelineNDJSON(w io.Writer, j *job.Job, runs []job.Run) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return eachTimelineRow(j, runs, func(r timelineRow) error { return enc.Encode(&r) })
}
