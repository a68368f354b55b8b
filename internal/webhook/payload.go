package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benchq/benchq/internal/job"
)

// MaxPayloadBytes caps a webhook body: receivers (and the proxies in front
// of them) often limit request bodies, and a CI callback needs the verdict,
// not every number.
const MaxPayloadBytes = 20 << 10

// maxErrorLen truncates a job's error text in the payload; it can list a
// reason per target.
const maxErrorLen = 1024

// ErrPayloadTooLarge is returned by Encode when even the payload without
// aggregates and threshold failures is over MaxPayloadBytes.
var ErrPayloadTooLarge = errors.New("webhook: payload too large")

// Subscribed reports whether job j's webhook asks for event.
func Subscribed(j *job.Job, event string) bool {
	if j == nil || j.Spec.Webhook == nil {
		return false
	}
	return slices.Contains(j.Spec.Webhook.Subscribed(), event)
}

// Payload is the JSON body of a webhook, {type, timestamp, data}, as
// Standard Webhooks suggests.
type Payload struct {
	Type      string    `json:"type" example:"job.succeeded"`
	Timestamp time.Time `json:"timestamp"`
	Data      Summary   `json:"data"`
}

// Summary is a job as a webhook receiver sees it.
type Summary struct {
	JobID      string                 `json:"job_id"`
	Name       string                 `json:"name,omitempty"`
	Labels     map[string]string      `json:"labels,omitempty"`
	Status     job.Status             `json:"status"`
	Verdict    string                 `json:"verdict,omitempty"`
	Failures   []job.ThresholdFailure `json:"failures,omitempty"`
	Error      string                 `json:"error,omitempty"`
	CreatedAt  time.Time              `json:"created_at"`
	StartedAt  *time.Time             `json:"started_at,omitempty"`
	FinishedAt *time.Time             `json:"finished_at,omitempty"`
	RunsDone   int                    `json:"runs_done"`
	RunsTotal  int                    `json:"runs_total"`
	Baseline   string                 `json:"baseline,omitempty"`
	// CompareTo is the job id the spec's compare_to resolved to; each
	// point's compare_to holds its difference to that job's point.
	CompareTo string           `json:"compare_to,omitempty"`
	Points    []PointAggregate `json:"points,omitempty"`
	// AggregatesOmitted is set when Points (and, if that was not enough,
	// Failures) were dropped to keep the body under MaxPayloadBytes; the
	// results link has everything.
	AggregatesOmitted bool  `json:"aggregates_omitted,omitempty"`
	FailuresOmitted   bool  `json:"failures_omitted,omitempty"`
	Links             Links `json:"links"`
	// ChangePoints are, in a trend.change_point event, the new change
	// points the job's end found in its template's history.
	ChangePoints []job.ChangePoint `json:"change_points,omitempty"`
	// ChangePointsOmitted counts the change points left out past
	// MaxPayloadChangePoints; the trends API lists them all.
	ChangePointsOmitted int `json:"change_points_omitted,omitempty"`
}

// MaxPayloadChangePoints is how many change points one payload carries,
// well within MaxPayloadBytes (each is about half a kilobyte).
const MaxPayloadChangePoints = 25

// WithChangePoints sets the payload's change points, at most
// MaxPayloadChangePoints of them, counting the rest.
func (p *Payload) WithChangePoints(found []job.ChangePoint) {
	n := min(len(found), MaxPayloadChangePoints)
	p.Data.ChangePoints, p.Data.ChangePointsOmitted = found[:n], len(found)-n
}

// PointAggregate is one point's numbers, averaged over its repeats.
type PointAggregate struct {
	Target      string       `json:"target"`
	Concurrency int          `json:"concurrency"`
	Requests    int          `json:"requests,omitempty"`
	Duration    job.Duration `json:"duration,omitempty"`
	Rate        float64      `json:"rate,omitempty"`
	Runs        int          `json:"runs"`
	// The means are null where nothing was measured: a point canceled
	// before it ran, or latencies where no request completed.
	MeanRPS     *float64        `json:"mean_rps"`
	P50Ms       *float64        `json:"p50_ms"`
	P99Ms       *float64        `json:"p99_ms"`
	FailedRatio *float64        `json:"failed_ratio"`
	CV          float64         `json:"cv"`
	Comparison  *job.Comparison `json:"comparison,omitempty"`
	CompareTo   *job.Comparison `json:"compare_to,omitempty"`
}

// Links point back at the API; relative unless a base URL was given.
type Links struct {
	Self    string `json:"self"`
	Results string `json:"results"`
	Report  string `json:"report"`
}

// NewPayload describes job j for event at now. a is j's analysis (nil for
// a job with no runs yet); base prefixes the links ("" leaves them
// relative).
func NewPayload(event string, j *job.Job, a *job.Analysis, base string, now time.Time) Payload {
	self := strings.TrimSuffix(base, "/") + "/v1/jobs/" + j.ID
	s := Summary{
		JobID: j.ID, Name: j.Spec.Name, Labels: j.Spec.Labels, Status: j.Status,
		Verdict: j.Verdict, Error: truncate(j.Error, maxErrorLen),
		CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, FinishedAt: j.FinishedAt,
		RunsDone: j.Progress.RunsDone, RunsTotal: j.Progress.RunsTotal, Baseline: j.Spec.Baseline,
		Links: Links{Self: self, Results: self + "/results", Report: self + "/report"},
	}
	if a != nil {
		s.Failures = a.Verdict.Failures
		vsJob := map[int]*job.Comparison{}
		if a.CompareTo != nil {
			s.CompareTo = a.CompareTo.JobID
			for _, c := range a.CompareTo.Cells {
				vsJob[c.Point.Index] = c.Comparison
			}
		}
		for _, p := range a.Points {
			pa := aggregate(p)
			pa.CompareTo = vsJob[p.Point.Index]
			s.Points = append(s.Points, pa)
		}
	}
	return Payload{Type: event, Timestamp: now.UTC(), Data: s}
}

func aggregate(p job.PointSummary) PointAggregate {
	return PointAggregate{
		Target: p.Point.Target, Concurrency: p.Point.Concurrency,
		Requests: p.Point.Requests, Duration: p.Point.Duration, Rate: p.Point.Rate,
		Runs: p.Runs, MeanRPS: p.RPS.MeanOrNil(),
		P50Ms: p.PercentilesMs["50"].MeanOrNil(), P99Ms: p.PercentilesMs["99"].MeanOrNil(),
		FailedRatio: p.FailedRatio.MeanOrNil(), CV: p.RPS.CV, Comparison: p.Comparison,
	}
}

// Encode marshals p within MaxPayloadBytes: over it, the per-point
// aggregates are dropped, then the threshold failures, each flagged.
func Encode(p Payload) ([]byte, error) {
	for step := 0; ; step++ {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // "rps >= 1000" stays readable in logs
		if err := enc.Encode(p); err != nil {
			return nil, fmt.Errorf("webhook: encode payload: %w", err)
		}
		b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if len(b) <= MaxPayloadBytes {
			return b, nil
		}
		switch step {
		case 0:
			p.Data.Points, p.Data.AggregatesOmitted = nil, true
		case 1:
			p.Data.Failures, p.Data.FailuresOmitted = nil, true
		default:
			return nil, fmt.Errorf("%w: %d bytes without aggregates, limit %d", ErrPayloadTooLarge, len(b), MaxPayloadBytes)
		}
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
