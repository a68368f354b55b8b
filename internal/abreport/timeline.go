package abreport

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// TimelinePoint is one interval of a run's timeline as a reader gets it:
// counts as measured, rates per second, times in ms.
type TimelinePoint struct {
	TS        float64 `json:"t_s"`        // the interval's start, seconds from the run's
	IntervalS float64 `json:"interval_s"` // its length
	Requests  int64   `json:"requests"`   // completed
	Succeeded int64   `json:"succeeded"`  // completed with a 2xx status and the expected length
	Failed    int64   `json:"failed"`     // by the classes of Failures
	// Failures is present when a request failed.
	Failures   *measure.Failures `json:"failures,omitempty"`
	Non2xx     int64             `json:"non_2xx"`
	Bytes      int64             `json:"bytes"`
	RPS        float64           `json:"rps"` // completed per second
	LatencyN   int64             `json:"latency_count"`
	P50Ms      float64           `json:"p50_ms"`
	P90Ms      float64           `json:"p90_ms"`
	P99Ms      float64           `json:"p99_ms"`
	MaxMs      float64           `json:"max_ms"`
	IntendedRS *float64          `json:"intended_rps,omitempty"` // the open model's
	AchievedRS *float64          `json:"achieved_rps,omitempty"`
	LateStarts *int64            `json:"late_starts,omitempty"`
	MaxLagMs   *float64          `json:"max_send_lag_ms,omitempty"`
	// Concurrency is, in a concurrency ramp, the most connections the
	// ramp allowed in the interval.
	Concurrency *int64 `json:"ramp_concurrency,omitempty"`
	// Warmup marks an interval of the run's warm-up (a spec's warmup),
	// which the run's result does not cover; TimelineOf sets it.
	Warmup bool `json:"warmup,omitempty"`
}

// Timeline gives tl's intervals as TimelinePoints (open says whether the
// run was in the open model); nil for a nil tl.
func Timeline(tl *measure.Timeline, open bool) []TimelinePoint {
	if tl == nil {
		return nil
	}
	sec := tl.Interval.Seconds()
	ramp := false
	for i := range tl.Intervals {
		ramp = ramp || tl.Intervals[i].Concurrency > 0
	}
	out := make([]TimelinePoint, len(tl.Intervals))
	for i := range tl.Intervals {
		iv := &tl.Intervals[i]
		q := iv.Latency.Quantiles(0.5, 0.9, 0.99)
		p := TimelinePoint{
			TS: round3(float64(i) * sec), IntervalS: sec,
			Requests: iv.Requests, Succeeded: iv.Succeeded, Failed: iv.Failures.Total(),
			Non2xx: iv.Non2xx, Bytes: iv.Bytes, RPS: round3(float64(iv.Requests) / sec),
			LatencyN: iv.Latency.Count,
			P50Ms:    ms(q[0]), P90Ms: ms(q[1]), P99Ms: ms(q[2]), MaxMs: ms(iv.Latency.Max),
		}
		if p.Failed > 0 {
			f := iv.Failures
			p.Failures = &f
		}
		if open {
			intended, achieved := round3(float64(iv.Intended)/sec), round3(float64(iv.Started)/sec)
			late, lag := iv.Late, ms(iv.MaxSendLag)
			p.IntendedRS, p.AchievedRS, p.LateStarts, p.MaxLagMs = &intended, &achieved, &late, &lag
		}
		if ramp {
			c := iv.Concurrency
			p.Concurrency = &c
		}
		out[i] = p
	}
	return out
}

// TimelineOf is m's timeline as Timeline gives it, the intervals of its
// warm-up (those that end by the measured window's start) marked Warmup;
// nil for a measurement without one.
func TimelineOf(m *measure.Measurement) []TimelinePoint {
	out := Timeline(m.Timeline, m.Open != nil)
	if m.Warmup <= 0 || len(out) == 0 {
		return out
	}
	window := m.Started.Round(0).Sub(m.Timeline.Start.Round(0))
	for i := range out {
		end := time.Duration(i+1) * m.Timeline.Interval
		out[i].Warmup = end <= window
	}
	return out
}

// WriteTimelineNDJSON writes m's timeline, one JSON object per interval and
// line, the warm-up's marked; nothing for a measurement without one.
func WriteTimelineNDJSON(w io.Writer, m *measure.Measurement) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, p := range TimelineOf(m) {
		if err := enc.Encode(&p); err != nil {
			return fmt.Errorf("abreport: write timeline: %w", err)
		}
	}
	return nil
}

func ms(us int64) float64 { return round3(float64(us) / 1000) }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
