package api

import (
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/monitor"
)

// JobResponse is a job as the API shows it: the spec with its defaults
// filled in, where it is in its lifecycle, and links to its sub-resources.
type JobResponse struct {
	ID     string     `json:"id" example:"01JC3W9Q5V1ZK2M4N6P8R0T2V4"`
	Status job.Status `json:"status" enums:"queued,running,succeeded,failed,canceled" example:"running"`
	// Spec is the job as submitted, with its secrets shown as
	// "[redacted]": the values of request headers whose name contains
	// auth, cookie, credential, key, passwd, password, secret, session,
	// signature or token (any case), in the job's and each target's
	// request; in ab lines the values of -A, -P, -C and of such -H
	// headers; and the user info of target and webhook URLs ("xxxxx@").
	// The worker sends the real values.
	Spec            job.Spec     `json:"spec"`
	CreatedAt       time.Time    `json:"created_at"`
	StartedAt       *time.Time   `json:"started_at,omitempty"`
	FinishedAt      *time.Time   `json:"finished_at,omitempty"`
	Progress        job.Progress `json:"progress"`
	Verdict         string       `json:"verdict,omitempty" enums:"pass,fail,none"`
	Error           string       `json:"error,omitempty"`
	CancelRequested bool         `json:"cancel_requested,omitempty"`
	// Pinned: kept past the retention (PUT /v1/jobs/{id}/pin).
	Pinned bool `json:"pinned"`
	// QueuedReason says why a queued job has not started although a
	// worker took it: the target host it waits for, and the job holding
	// it when that job is the caller's own ("another job" otherwise; an
	// exclusive job waits for its hosts to be free).
	QueuedReason string   `json:"queued_reason,omitempty" example:"waiting for target 127.0.0.1:8080, held by job 01JC3W9Q5V1ZK2M4N6P8R0T2V4"`
	Links        JobLinks `json:"links"`
}

// JobLinks are the URLs of a job's sub-resources.
type JobLinks struct {
	Self    string `json:"self" example:"/v1/jobs/01JC3W9Q5V1ZK2M4N6P8R0T2V4"`
	Results string `json:"results" example:"/v1/jobs/01JC3W9Q5V1ZK2M4N6P8R0T2V4/results"`
	Events  string `json:"events" example:"/v1/jobs/01JC3W9Q5V1ZK2M4N6P8R0T2V4/events"`
}

// ListJobsResponse is one page of jobs, newest first.
type ListJobsResponse struct {
	Jobs []JobResponse `json:"jobs"`
	// NextCursor fetches the next page; empty on the last one.
	NextCursor string `json:"next_cursor"`
}

// ResultsResponse is a job with every run stored so far and what they
// mean: repeat statistics per point, the baseline comparison, saturation
// and the threshold verdict, computed from those runs (provisional while
// the job runs).
type ResultsResponse struct {
	Job      JobResponse   `json:"job"`
	Runs     []RunResponse `json:"runs"`
	Analysis job.Analysis  `json:"analysis"`
}

// RunResponse is one repeat of one point with its ab-compatible result.
type RunResponse struct {
	Point       int              `json:"point"`
	Repeat      int              `json:"repeat"`
	Target      string           `json:"target"`
	Concurrency int              `json:"concurrency"`
	StartedAt   time.Time        `json:"started_at"`
	FinishedAt  time.Time        `json:"finished_at"`
	Result      *abreport.Report `json:"result"`
	// Shards lists the worker processes of a sharded run (sweep.shards >
	// 1); result is their merged measurement.
	Shards []job.ShardRun `json:"shards,omitempty"`
	// Partial marks the run a cancel stopped part way: result holds what
	// it measured until then; the analysis leaves it out.
	Partial bool `json:"partial,omitempty"`
	// Aborted marks a run that a threshold marked "abort" ended once it
	// was certainly broken: aborted_by is that threshold as the spec
	// wrote it, abort_reason what the run had measured; result holds what
	// it measured until then, and the verdict fails the threshold.
	Aborted     bool   `json:"aborted,omitempty"`
	AbortedBy   string `json:"aborted_by,omitempty" example:"failed_ratio < 0.01"`
	AbortReason string `json:"abort_reason,omitempty" example:"failed_ratio 0.5 >= 0.01 after 200 requests (99.9 % lower bound 0.4)"`
	// Server is the target's CPU and memory during the run, read from its
	// monitor endpoint; absent for a target without one.
	Server *monitor.Server `json:"server,omitempty"`
	// Timeline is the run's intervals, with ?timeline=true only; absent
	// then for a run stored before timelines were recorded.
	Timeline *TimelineResponse `json:"timeline,omitempty"`
}

// TimelineResponse is what happened during a run, interval by interval:
// interval i starts i × interval_s seconds after the run's start (the
// shards' agreed start for a sharded run); a request counts in the
// interval it ended in, so the intervals' requests, failures, non_2xx and
// bytes add up to the run's exactly. Percentiles are read from each
// interval's own histogram (within 6 %); max is exact.
type TimelineResponse struct {
	IntervalS float64 `json:"interval_s" example:"1"`
	// LatencyErrorPct: an interval's percentiles are read from a compact
	// histogram, at most this much above the recorded latency (6.25; 12.5
	// or 25 where a long, fast run was stored coarser to stay within its
	// bound). The run's own percentiles are exact to 0.1 %.
	LatencyErrorPct float64                  `json:"latency_error_pct" example:"6.25"`
	Intervals       []abreport.TimelinePoint `json:"intervals"`
}

// HealthResponse answers /healthz and /readyz.
type HealthResponse struct {
	Status string `json:"status" example:"ok"`
}

func jobPath(id string) string { return "/v1/jobs/" + id }

func newJobResponse(j *job.Job) JobResponse {
	self := jobPath(j.ID)
	return JobResponse{
		ID:              j.ID,
		Status:          j.Status,
		Spec:            j.Spec.Redacted(),
		CreatedAt:       j.CreatedAt,
		StartedAt:       j.StartedAt,
		FinishedAt:      j.FinishedAt,
		Progress:        j.Progress,
		Verdict:         j.Verdict,
		Error:           j.Error,
		CancelRequested: j.CancelRequested,
		Pinned:          j.Pinned,
		QueuedReason:    j.QueuedReason,
		Links:           JobLinks{Self: self, Results: self + "/results", Events: self + "/events"},
	}
}

func newRunResponses(runs []job.Run) []RunResponse {
	out := make([]RunResponse, 0, len(runs))
	for _, r := range runs {
		out = append(out, RunResponse{
			Point:       r.Point,
			Repeat:      r.Repeat,
			Target:      r.Target,
			Concurrency: r.Concurrency,
			StartedAt:   r.StartedAt,
			FinishedAt:  r.FinishedAt,
			Result:      r.Result,
			Shards:      r.Shards,
			Partial:     r.Partial,
			Aborted:     r.Aborted,
			AbortedBy:   r.AbortedBy,
			AbortReason: r.AbortReason,
			Server:      r.Server,
		})
	}
	return out
}
