package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// Job is what the client reads of a job. Raw is the server's JSON as sent,
// for callers that print it.
type Job struct {
	ID              string       `json:"id"`
	Status          job.Status   `json:"status"`
	Progress        job.Progress `json:"progress"`
	Verdict         string       `json:"verdict,omitempty"`
	Error           string       `json:"error,omitempty"`
	CancelRequested bool         `json:"cancel_requested,omitempty"`
	// QueuedReason says why a queued job waits (a target host another job
	// holds).
	QueuedReason string `json:"queued_reason,omitempty"`
	// WebhookSecret is in the answer to the submission only, and only
	// when the job has a webhook and the server made a secret for it.
	WebhookSecret string    `json:"webhook_secret,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	// Spec is the part of the spec a listing shows.
	Spec JobSpec `json:"spec"`
	Raw  []byte  `json:"-"`
}

// JobSpec is what the client reads of a job's spec.
type JobSpec struct {
	Name   string            `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// ListFilter selects the jobs List returns, as GET /v1/jobs filters them.
// The zero value lists the newest page of every job the key may see.
type ListFilter struct {
	Status string
	// Labels are key:value; every one must match.
	Labels []string
	// Name keeps jobs whose name contains it, ignoring case.
	Name string
	// Limit is the page size, 0 for the server's default.
	Limit  int
	Cursor string
}

// JobList is one page of jobs, newest first.
type JobList struct {
	Jobs []Job `json:"jobs"`
	// NextCursor fetches the next page; empty on the last one.
	NextCursor string `json:"next_cursor"`
	Raw        []byte `json:"-"`
}

// List GETs /v1/jobs with the filter.
func (c *Client) List(ctx context.Context, f ListFilter) (JobList, error) {
	q := url.Values{}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	for _, l := range f.Labels {
		q.Add("label", l)
	}
	if f.Name != "" {
		q.Set("name", f.Name)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Cursor != "" {
		q.Set("cursor", f.Cursor)
	}
	path := "/v1/jobs"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var l JobList
	_, err := c.call(ctx, http.MethodGet, path, nil, nil, &l, &l.Raw)
	return l, err
}

// Submission is how a job is sent.
type Submission struct {
	// Spec is the job spec as JSON.
	Spec []byte
	// IdempotencyKey, when set, is sent as Idempotency-Key: the server
	// answers a repeat of the same key and body with the original job.
	IdempotencyKey string
}

// Submitted is the server's answer to a submission.
type Submitted struct {
	Job Job
	// Replayed is true when the server answered with the job an earlier
	// submission of the same idempotency key created.
	Replayed bool
}

func jobPath(id string) string { return "/v1/jobs/" + url.PathEscape(id) }

// Submit POSTs a job spec to /v1/jobs.
func (c *Client) Submit(ctx context.Context, s Submission) (Submitted, error) {
	var out Submitted
	h := http.Header{}
	if s.IdempotencyKey != "" {
		h.Set("Idempotency-Key", s.IdempotencyKey)
	}
	status, err := c.call(ctx, http.MethodPost, "/v1/jobs", s.Spec, h, &out.Job, &out.Job.Raw)
	if err != nil {
		return out, err
	}
	if out.Job.ID == "" {
		return out, fmt.Errorf("POST /v1/jobs: answer %d names no job", status)
	}
	out.Replayed = status == http.StatusOK
	return out, nil
}

// Job GETs /v1/jobs/{id}.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var j Job
	_, err := c.call(ctx, http.MethodGet, jobPath(id), nil, nil, &j, &j.Raw)
	return j, err
}

// Cancel DELETEs /v1/jobs/{id} and returns the job as the server left it.
// A job that already finished is an error matching ErrConflict.
func (c *Client) Cancel(ctx context.Context, id string) (Job, error) {
	var j Job
	_, err := c.call(ctx, http.MethodDelete, jobPath(id), nil, nil, &j, &j.Raw)
	return j, err
}

// Report GETs /v1/jobs/{id}/report?format=format. The caller closes the
// body; it is bounded by the request timeout like every other call.
func (c *Client) Report(ctx context.Context, id, format string) (io.ReadCloser, error) {
	return c.ReportWith(ctx, id, ReportQuery{Format: format})
}

// ReportQuery is what a report is asked for with.
type ReportQuery struct {
	Format string
	// Run, "POINT:REPEAT", narrows the per-run formats (hgrm,
	// timeline-csv, timeline-ndjson) to that run; empty means every run.
	// With a run's Chart it names the run drawn.
	Run string
	// Chart, with Format svg or png, draws one run's "timeline" or
	// "distribution" instead of the sweep's chart.
	Chart string
}

// ReportWith is Report with every query parameter the endpoint takes.
func (c *Client) ReportWith(ctx context.Context, id string, q ReportQuery) (io.ReadCloser, error) {
	v := url.Values{"format": {q.Format}}
	if q.Run != "" {
		v.Set("run", q.Run)
	}
	if q.Chart != "" {
		v.Set("chart", q.Chart)
	}
	ctx, cancel := context.WithTimeout(ctx, c.requestTimeout())
	req, err := c.request(ctx, http.MethodGet, jobPath(id)+"/report?"+v.Encode(), nil)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := c.send(req)
	if err != nil {
		cancel()
		return nil, err
	}
	return cancelOnClose{resp.Body, cancel}, nil
}

// Results is what the client reads of a job's results. Raw is the
// server's JSON as sent (the job and the analysis too), for callers that
// print it.
type Results struct {
	Runs []RunResult `json:"runs"`
	Raw  []byte      `json:"-"`
}

// RunResult is what the client reads of one stored run; point and repeat
// count from 0.
type RunResult struct {
	Point       int              `json:"point"`
	Repeat      int              `json:"repeat"`
	Target      string           `json:"target"`
	Concurrency int              `json:"concurrency"`
	Result      *abreport.Report `json:"result"`
	// Timeline is there when asked for (ResultsOptions.Timeline) and the
	// run was stored with one.
	Timeline *Timeline `json:"timeline,omitempty"`
}

// Timeline is a run's intervals: interval i starts i × IntervalS seconds
// after the run's start.
type Timeline struct {
	IntervalS float64                  `json:"interval_s"`
	Intervals []abreport.TimelinePoint `json:"intervals"`
}

// ResultsOptions chooses what Results asks for; the zero value asks for
// the results alone.
type ResultsOptions struct {
	// Timeline adds each run's timeline (?timeline=true).
	Timeline bool
}

// Results GETs /v1/jobs/{id}/results.
func (c *Client) Results(ctx context.Context, id string, o ResultsOptions) (Results, error) {
	path := jobPath(id) + "/results"
	if o.Timeline {
		path += "?timeline=true"
	}
	var r Results
	_, err := c.call(ctx, http.MethodGet, path, nil, nil, &r, &r.Raw)
	return r, err
}

// cancelOnClose releases a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
