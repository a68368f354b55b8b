package job

import (
	"encoding/json"

	"github.com/benchq/benchq/internal/abreport"
)

// Analysis is what a job's runs mean, beyond their raw numbers: statistics
// over repeats per point, the difference to the baseline target, where each
// target saturates, and the threshold verdict. analysis.Analyze builds it
// from the spec and the stored runs; the API serves it with the results and
// the report renderers draw their tables and charts from it.
type Analysis struct {
	Points     []PointSummary `json:"points"`
	Saturation []Saturation   `json:"saturation,omitempty"`
	Verdict    VerdictResult  `json:"verdict"`
	// CompareTo compares every point with the compare_to job's, when the
	// spec names one and analysis.AnalyzeAgainst was given it.
	CompareTo *BaselineComparison `json:"compare_to,omitempty"`
	// Capacity is each target's answer to the spec's search, in target
	// order, with Sentence saying it in words.
	Capacity         []Capacity `json:"capacity,omitempty"`
	CapacitySentence string     `json:"capacity_sentence,omitempty"`
}

// Stat summarises one metric over a point's repeats. SD is the sample
// standard deviation (0 for one repeat); CV = SD / Mean (0 when Mean is 0).
// With N = 0 (a point not run, or canceled, or a latency where nothing
// completed) nothing was measured: JSON then carries null for every number
// but N, never a 0 that reads as a measurement.
type Stat struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean" extensions:"x-nullable"`
	SD   float64 `json:"sd" extensions:"x-nullable"`
	Min  float64 `json:"min" extensions:"x-nullable"`
	Max  float64 `json:"max" extensions:"x-nullable"`
	CV   float64 `json:"cv" extensions:"x-nullable"`
}

// MarshalJSON writes an empty Stat's numbers as null.
func (s Stat) MarshalJSON() ([]byte, error) {
	if s.N == 0 {
		return []byte(`{"n":0,"mean":null,"sd":null,"min":null,"max":null,"cv":null}`), nil
	}
	type plain Stat // without this method, so no recursion
	return json.Marshal(plain(s))
}

// MeanOrNil is the mean where something was measured, nil where nothing
// was (N = 0), for JSON that says null rather than 0.
func (s Stat) MeanOrNil() *float64 {
	if s.N == 0 {
		return nil
	}
	m := s.Mean
	return &m
}

// PointSummary aggregates every stored run of one point.
type PointSummary struct {
	Point Point `json:"point"`
	Runs  int   `json:"runs"`

	// RPS is ab's "Requests per second": every completed request,
	// whatever its status. GoodRPS counts only the successes (2xx, and
	// the expected length), what a reader means by throughput; ErrorRatio
	// is the share of attempted requests that failed or were not 2xx.
	RPS              Stat `json:"rps"`
	GoodRPS          Stat `json:"good_rps"`
	ErrorRatio       Stat `json:"error_ratio"`
	TimePerRequestMs Stat `json:"time_per_request_ms"`
	// PercentilesMs has ab's keys "50".."100", as abreport, and the tail
	// "99.9" and "99.99" read from each run's histogram.
	PercentilesMs map[string]Stat `json:"percentiles_ms"`
	FailedRatio   Stat            `json:"failed_ratio"`
	Non2xxRatio   Stat            `json:"non_2xx_ratio"`

	// Noisy is set when the CV of req/s is above 0.10
	// (analysis.NoisyCV): rerun, or add repeats, before trusting a
	// difference between targets.
	Noisy bool `json:"noisy"`
	// ClientSaturated is set when the load generator was short of CPU in
	// any repeat (abreport's client_saturated): the point's req/s then
	// measures the client, not the server.
	ClientSaturated bool `json:"client_saturated"`
	// ServerCoresBusy is, over the repeats, how many cores the target kept
	// busy (its runs' server.cores_busy, from the target's monitor),
	// ServerCores how many it has and ServerCPUShare the share of them
	// busy; nil (0) when the target has no monitor or its CPU or cores
	// are unknown.
	ServerCoresBusy *Stat   `json:"server_cores_busy,omitempty"`
	ServerCores     float64 `json:"server_cores,omitempty" example:"1"`
	ServerCPUShare  *Stat   `json:"server_cpu_share,omitempty"`
	// BusyStarts counts the repeats that began on a busy server: with
	// sweep.settle, the server was still busy when the wait ran out (or
	// its monitor could not tell), so the run may have measured what an
	// earlier one left queued.
	BusyStarts int `json:"busy_starts,omitempty"`
	// LimitedBy names what held the point's req/s back: "client" (the
	// load generator was short of CPU, ClientSaturated), "server_cpu" (the
	// target kept at least 90 % of its cores busy) or "neither" (both had
	// headroom: latency, the network, locks or a queue). Absent when it
	// cannot be told: the client had headroom and the server's CPU share
	// is unknown.
	LimitedBy string `json:"limited_by,omitempty" enums:"client,server_cpu,neither"`
	// Unsteady counts the repeats whose throughput or latency shifted
	// while they ran (abreport's unsteady); UnsteadyReason is the first
	// such repeat's reason.
	Unsteady       int    `json:"unsteady,omitempty"`
	UnsteadyReason string `json:"unsteady_reason,omitempty"`

	// TLSHandshakeMs is the mean TLS handshake time of the new
	// connections, over the repeats that made one; nil for plain HTTP.
	TLSHandshakeMs *Stat `json:"tls_handshake_ms,omitempty"`
	// TLSFailures sums failed handshakes by reason over the repeats; nil
	// when none failed.
	TLSFailures *abreport.TLSFailures `json:"tls_failures,omitempty"`

	// Comparison is set on every non-baseline target's point when the spec
	// names a baseline.
	Comparison *Comparison `json:"comparison,omitempty"`
	// Comparisons holds every comparison of this point with another
	// target's (Spec.ComparisonPairs, the baseline's included), in the
	// pairs' order.
	Comparisons []Comparison `json:"comparisons,omitempty"`
}

// Comparison is a point's difference to the baseline target's point with
// the same concurrency and requests/duration/rate, in percent of the
// baseline's mean: positive means more req/s or higher latency. Req/s is
// compared on successful requests (good_rps).
type Comparison struct {
	Baseline string  `json:"baseline"`
	RPSPct   float64 `json:"rps_pct"`
	P50Pct   float64 `json:"p50_pct"`
	P99Pct   float64 `json:"p99_pct"`
	// The same differences formatted as the seeds write them: "+12.69 %".
	RPS string `json:"rps"`
	P50 string `json:"p50"`
	P99 string `json:"p99"`
	// Whether each difference is more than the noise of the repeats; a
	// report shows the Text of these, not the bare percentage, so that a
	// difference within noise reads as "~".
	RPSSignificance Significance `json:"rps_significance"`
	P50Significance Significance `json:"p50_significance"`
	P99Significance Significance `json:"p99_significance"`
}

// Saturation says where one target stops scaling in a concurrency sweep
// (for one requests/duration/rate value). A nil field means not reached
// within the sweep.
type Saturation struct {
	Target string `json:"target"`
	// Requests, Duration or Rate name the sweep slice this is about.
	Requests int      `json:"requests,omitempty"`
	Duration Duration `json:"duration,omitempty"`
	Rate     float64  `json:"rate,omitempty"`

	PlateauAt *int `json:"plateau_at,omitempty"` // lowest c where req/s gains < 5 % per doubling
	// PeakAt is set when req/s falls by more than 10 % past its highest
	// point after the plateau begins: the c of that highest point, and
	// FallPct how far the last point is below it.
	PeakAt        *int    `json:"peak_at,omitempty"`
	FallPct       float64 `json:"fall_pct,omitempty"`
	LatencyKneeAt *int    `json:"latency_knee_at,omitempty"` // lowest c where latency grows faster than c
	FailuresFrom  *int    `json:"failures_from,omitempty"`   // lowest c with failed requests
	// ClientBoundFrom is the lowest c whose load generator was short of
	// CPU: a plateau from there on may be the client's, not the server's.
	ClientBoundFrom *int `json:"client_bound_from,omitempty"`
	// ServerCPUBoundFrom is the lowest c whose point is limited by the
	// server's CPU (PointSummary.LimitedBy "server_cpu").
	ServerCPUBoundFrom *int   `json:"server_cpu_bound_from,omitempty"`
	Sentence           string `json:"sentence"` // one sentence a person reads
}

// VerdictResult is the outcome of the spec's thresholds, and of the rule
// that some request of every run succeeds, over every point.
type VerdictResult struct {
	Result   string             `json:"result"` // pass | fail | none (no thresholds, and nothing failed)
	Failures []ThresholdFailure `json:"failures,omitempty"`
}

// Verdict values.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
	VerdictNone = "none"
)

// ThresholdFailure is one cell that broke one threshold. Point is -1 when
// the threshold failed as a whole (it references a baseline job that is
// gone, say); Reason then says why. A cell with a run in which no request
// succeeded fails with Threshold analysis.NoSuccessRule ("no_success"), Value 0 and
// a Reason saying what happened to the requests.
type ThresholdFailure struct {
	Threshold   string   `json:"threshold"` // as written in the spec, or no_success
	Target      string   `json:"target"`
	Point       int      `json:"point"`
	Concurrency int      `json:"concurrency"`
	Requests    int      `json:"requests,omitempty"`
	Duration    Duration `json:"duration,omitempty"`
	Rate        float64  `json:"rate,omitempty"`
	Value       float64  `json:"value"` // the point's mean of the metric
	// For a threshold relative to the compare_to job: that job, the mean
	// of the referenced metric in its matching cell, and the bound the
	// value was held to (factor × baseline + offset).
	BaselineJob string   `json:"baseline_job,omitempty"`
	Baseline    *float64 `json:"baseline,omitempty"`
	Bound       *float64 `json:"bound,omitempty"`
	// Significance, for a relative threshold, tests the cell's repeats
	// against the baseline's moved to the bound: the cell fails only on a
	// significant difference, or when too few repeats leave nothing to
	// conclude (then the mean alone decided).
	Significance *Significance `json:"significance,omitempty"`
	// TrendJobs, for the trend, are the earlier jobs whose median
	// (in Baseline) the value was held to, newest first.
	TrendJobs []string `json:"trend_jobs,omitempty"`
	// Reason is set when the cell fails without a value to compare: a
	// latency metric of a point where no request completed, a cell the
	// baseline job does not have, or a run without a successful request.
	Reason string `json:"reason,omitempty"`
}

// HasRuns reports whether the analysis summarises at least one run.
func (a *Analysis) HasRuns() bool {
	for _, p := range a.Points {
		if p.Runs > 0 {
			return true
		}
	}
	return false
}

// ComparisonWith is the point's comparison with baseline's point, nil
// when there is none.
func (ps *PointSummary) ComparisonWith(baseline string) *Comparison {
	for k := range ps.Comparisons {
		if ps.Comparisons[k].Baseline == baseline {
			return &ps.Comparisons[k]
		}
	}
	return nil
}

// Significance is a difference between two points as a reader should take
// it: the effect with its 95 % confidence interval and the p-value of the
// test behind that interval, at any number of repeats from 2 a side.
//
// The interval is a t interval on the logarithms of the repeats' values,
// so it is an interval for the ratio of the two sides (for their means
// when both sides spread alike, as repeats of one setup do): the pooled
// variance when both sides have as many repeats (exact for log-normal
// repeats of equal spread, and robust to unequal spread at equal sizes),
// Welch's otherwise. Values of zero or below (a count of failures) are
// compared by their difference instead. A seeded Monte-Carlo test keeps
// its coverage within 93-97 %.
type Significance struct {
	// P is the two-sided p-value of the t test whose interval CILowPct
	// and CIHighPct give; null when a side has fewer than 2 values.
	P *float64 `json:"p" extensions:"x-nullable"`
	// PAdjusted is P after Benjamini-Hochberg control of the false
	// discovery rate over every comparison of the job; Significant
	// follows it.
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	// PU is the Mann-Whitney U test's p-value (benchstat's test), given
	// once both sides have enough repeats for it to ever reach 0.05
	// (analysis.SignificanceAlpha): it assumes nothing of the values'
	// distribution.
	PU *float64 `json:"p_u,omitempty"`
	// CILowPct and CIHighPct bound the difference in percent of the
	// baseline with 95 % confidence.
	CILowPct  *float64 `json:"ci_low_pct,omitempty"`
	CIHighPct *float64 `json:"ci_high_pct,omitempty"`
	// Significant is set when the interval excludes no difference, and
	// stays set after false-discovery control.
	Significant bool `json:"significant"`
	// NBase and N are the repeats that had a value on the baseline's side
	// and on this point's.
	NBase int `json:"n_base"`
	N     int `json:"n"`
	// Conclusive is false when a side has fewer than 2 repeats: there is
	// no spread to judge the difference by, and Text says so.
	Conclusive bool `json:"conclusive"`
	// Text is the difference as a person reads it:
	// "+12.69 % [+9.8, +15.6] (p=0.008)", "~ +0.40 % [-2.1, +2.9]
	// (p=0.71)", "~ -50.00 % (1 vs 3 repeats: …)", or "n/a" when there is
	// no percentage to give.
	Text string `json:"text"`
}

// BaselineComparison sets every point that has runs beside the compare_to
// job's point of the same target and sweep values.
type BaselineComparison struct {
	JobID string `json:"job_id"`
	// Gone says why the baseline job could not be compared with.
	Gone  string         `json:"gone,omitempty"`
	Cells []BaselineCell `json:"cells,omitempty"`
}

// BaselineCell is one point of this job against the baseline job's.
type BaselineCell struct {
	Point Point `json:"point"`
	// BaselinePoint is the matching point's index in the baseline job, -1
	// when it has none with runs; the other baseline fields are then 0.
	BaselinePoint int     `json:"baseline_point"`
	RPS           float64 `json:"rps"`
	BaselineRPS   float64 `json:"baseline_rps"`
	P99Ms         float64 `json:"p99_ms"`
	BaselineP99Ms float64 `json:"baseline_p99_ms"`
	// Comparison is this point relative to the baseline job's, in percent
	// of the latter; its Baseline field holds the baseline job id.
	Comparison *Comparison `json:"comparison,omitempty"`
}
