package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobend"
	"github.com/benchq/benchq/internal/report"
	"github.com/benchq/benchq/internal/store"
)

// Page sizes of GET /v1/jobs.
const (
	defaultPageSize = 20
	maxPageSize     = 100
)

// handleCreateJob submits a job.
//
//	@Summary		Submit a benchmark job
//	@Description	Decodes, defaults and validates the spec, stores the job as queued and enqueues it. Every invalid field is listed at once in a 422 problem.
//	@Tags			jobs
//	@Accept			json
//	@Produce		json
//	@Param			spec	body		job.Spec	true	"the job spec; every field but targets has a default"
//	@Param			Idempotency-Key	header	string	false	"1-255 printable ASCII; the same key and body within 24 h return the first job (200), another body is a 409"
//	@Success		200		{object}	CreateJobResponse	"replay of an Idempotency-Key: the job its first request created, with its generated webhook_secret again (header Idempotent-Replayed: true)"
//	@Success		202		{object}	CreateJobResponse	"accepted; Location names the job; webhook_secret appears only here and in an Idempotency-Key replay"
//	@Header			202		{string}	Location	"/v1/jobs/{id}"
//	@Failure		400		{object}	Problem		"malformed JSON"
//	@Failure		413		{object}	Problem		"body over the size limit"
//	@Failure		401		{object}	Problem		"no valid API key"
//	@Failure		422		{object}	Problem		"invalid fields, each named (a per-run quota names the field, its limit and the value asked); target-unverified: a target host does not serve the key's token"
//	@Failure		429		{object}	Problem		"over the active-job or submission-rate quota; limit (and value) in the body, Retry-After header"
//	@Failure		409		{object}	Problem		"Idempotency-Key reused with another body (idempotency-conflict) or still in progress (idempotency-in-progress)"
//	@Failure		503		{object}	Problem		"store-unavailable: Redis unreachable or refusing writes (Retry-After header); no job was created, retry"
//	@Header			503		{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs [post]
func (s *Server) handleCreateJob(c echo.Context) error {
	if _, ok := c.Request().Header[idempotencyHeader]; ok {
		return s.createIdempotent(c) // idempotency.go: claims the key, then creates the job
	}
	spec, err := s.readSpec(c) // body.go
	if err != nil {
		return err
	}
	j, secret, err := s.admit.Create(c.Request().Context(), principalOf(c), spec, sourceOf(c, admit.ViaAPI))
	if err != nil {
		return err
	}
	return created(c, j, secret)
}

// created answers a new job with 202, its Location and the webhook
// secret generated for it.
func created(c echo.Context, j *job.Job, secret string) error {
	c.Response().Header().Set(echo.HeaderLocation, jobPath(j.ID))
	return c.JSON(http.StatusAccepted, CreateJobResponse{JobResponse: newJobResponse(j), WebhookSecret: secret})
}

// decodeError sorts Decode's errors: an oversized body is a 413, a body
// that is not a JSON object at all a 400, and field problems a 422.
func decodeError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errcode.Newf(errcode.BodyTooLarge, "the limit is %d bytes", limit)
	}
	if ve, ok := job.AsInvalid(err); ok {
		for _, p := range ve.Problems {
			if p.Field != "" {
				return err
			}
		}
		return errcode.Wrap(err, errcode.MalformedBody, ve.Message)
	}
	if errors.Is(err, job.ErrInvalid) {
		return err
	}
	return errcode.Wrap(err, errcode.MalformedBody, "the request body could not be read")
}

// handleListJobs lists jobs, newest first.
//
//	@Summary		List jobs
//	@Description	Filters by status, by labels (every label must match) and by a part of the name; pages with an opaque cursor.
//	@Tags			jobs
//	@Produce		json
//	@Param			status	query		string		false	"only jobs in this status"	Enums(queued,running,succeeded,failed,canceled)
//	@Param			label	query		[]string	false	"key:value; repeat to require several"	collectionFormat(multi)
//	@Param			name	query		string		false	"only jobs whose name contains this, ignoring case"
//	@Param			cursor	query		string		false	"next_cursor of the previous page"
//	@Param			limit	query		int			false	"page size, 1..100 (default 20)"
//	@Success		200		{object}	ListJobsResponse
//	@Failure		400		{object}	Problem	"bad filter"
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable (reads are served while it refuses writes); retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs [get]
func (s *Server) handleListJobs(c echo.Context) error {
	f, err := listFilter(c)
	if err != nil {
		return err
	}
	if p := principalOf(c); !p.Admin {
		if p.KeyID == "" {
			// The store reads Owner "" as every owner: only an admin may.
			return errors.New("api: list jobs: a caller without an owner")
		}
		f.Owner = p.KeyID
	}
	jobs, next, err := s.store.ListJobs(c.Request().Context(), f)
	if err != nil {
		return fmt.Errorf("api: list jobs: %w", err)
	}
	resp := ListJobsResponse{Jobs: make([]JobResponse, 0, len(jobs)), NextCursor: next}
	for _, j := range jobs {
		resp.Jobs = append(resp.Jobs, newJobResponse(j))
	}
	return c.JSON(http.StatusOK, resp)
}

func listFilter(c echo.Context) (store.ListFilter, error) {
	q := c.QueryParams()
	f := store.ListFilter{Cursor: q.Get("cursor"), Name: q.Get("name"), Limit: defaultPageSize}
	if st := q.Get("status"); st != "" {
		switch s := job.Status(st); s {
		case job.StatusQueued, job.StatusRunning, job.StatusSucceeded, job.StatusFailed, job.StatusCanceled:
			f.Status = s
		default:
			return f, queryError("status", "unknown status %q", st)
		}
	}
	for _, l := range q["label"] {
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" {
			return f, queryError("label", "label %q is not key:value", l)
		}
		if f.Labels == nil {
			f.Labels = map[string]string{}
		}
		f.Labels[k] = v
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxPageSize {
			return f, queryError("limit", "limit %q is not an integer in 1..%d", l, maxPageSize)
		}
		f.Limit = n
	}
	return f, nil
}

func queryError(field, format string, args ...any) error {
	return errcode.Newf(errcode.BadQuery, format, args...).WithField(field)
}

// handleGetJob shows one job.
//
//	@Summary		Get a job
//	@Description	The spec with defaults, status, progress (runs done, requests done, current rps) and verdict.
//	@Tags			jobs
//	@Produce		json
//	@Param			id	path		string	true	"job id"
//	@Success		200	{object}	JobResponse
//	@Failure		404	{object}	Problem
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable (reads are served while it refuses writes); retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id} [get]
func (s *Server) handleGetJob(c echo.Context) error {
	j, err := s.ownedJob(c, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, newJobResponse(j))
}

// handleGetResults shows a job with its runs and their analysis.
//
//	@Summary		Get a job's results
//	@Description	Every run stored so far, each with its ApacheBench-compatible result, and their analysis: per point the mean, sd, min, max and CV over repeats, the difference to the baseline target ("+12.69 %"), where each target saturates, and the threshold verdict with the failing cells.
//	@Tags			jobs
//	@Produce		json
//	@Param			id			path		string	true	"job id"
//	@Param			timeline	query		bool	false	"true adds each run's timeline: its intervals' counts, bytes and latency percentiles"
//	@Success		200			{object}	ResultsResponse
//	@Failure		400			{object}	Problem	"timeline is not true or false (field: timeline)"
//	@Failure		404			{object}	Problem
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable (reads are served while it refuses writes); retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id}/results [get]
func (s *Server) handleGetResults(c echo.Context) error {
	withTimeline, err := boolQuery(c, "timeline")
	if err != nil {
		return err
	}
	j, runs, a, err := s.jobResults(c, c.Param("id"))
	if err != nil {
		return err
	}
	resp := ResultsResponse{Job: newJobResponse(j), Runs: newRunResponses(runs), Analysis: a}
	if withTimeline {
		// Decoded only when asked: a run's stored measurement is the
		// largest thing a results page would otherwise never read.
		for i := range runs {
			tl, err := report.TimelineOf(&runs[i])
			if err != nil {
				return fmt.Errorf("api: job %s: run %d:%d: %w", j.ID, runs[i].Point, runs[i].Repeat, err)
			}
			if tl != nil {
				resp.Runs[i].Timeline = &TimelineResponse{IntervalS: tl.IntervalS, LatencyErrorPct: tl.LatencyErrorPct, Intervals: tl.Intervals}
			}
		}
	}
	return c.JSON(http.StatusOK, resp)
}

// boolQuery reads an optional true/false query parameter; absent is false.
func boolQuery(c echo.Context, name string) (bool, error) {
	v := c.QueryParam(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, queryError(name, "%s %q is not true or false", name, v)
	}
	return b, nil
}

// jobResults loads a job the caller may see, its stored runs and their
// analysis, which the results and the report endpoints both show: for a
// finished job the one stored as it ended, for another computed now
// (against the compare_to job's runs).
func (s *Server) jobResults(c echo.Context, id string) (*job.Job, []job.Run, job.Analysis, error) {
	j, err := s.ownedJob(c, id)
	if err != nil {
		return nil, nil, job.Analysis{}, err
	}
	ctx := c.Request().Context()
	runs, err := s.store.Runs(ctx, id)
	if err != nil {
		return nil, nil, job.Analysis{}, fmt.Errorf("api: get runs: %w", err)
	}
	if j.Status.Terminal() && j.Analysis != nil {
		// What the job ended with: its verdict was decided on it, and the
		// compare_to job it was judged against may have expired since.
		return j, runs, *j.Analysis, nil
	}
	a, err := jobend.Analyze(ctx, s.store, j, runs)
	if err != nil {
		return nil, nil, job.Analysis{}, fmt.Errorf("api: analyze job %s: %w", id, err)
	}
	return j, runs, a, nil
}

// handleCancelJob cancels a job.
//
//	@Summary		Cancel a job
//	@Description	A queued job never starts; a running one stops within about a second and keeps the runs already finished.
//	@Tags			jobs
//	@Produce		json
//	@Param			id	path		string	true	"job id"
//	@Success		202	{object}	JobResponse	"cancel requested"
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem	"the job already finished"
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id} [delete]
func (s *Server) handleCancelJob(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	j, err := s.ownedJob(c, id)
	if err != nil {
		return err
	}
	if j.Status.Terminal() {
		return errcode.Newf(errcode.JobFinished, "job %s is %s", id, j.Status)
	}
	j, err = s.ender.Cancel(ctx, id)
	if errors.Is(err, store.ErrConflict) {
		return errcode.Newf(errcode.JobFinished, "job %s finished meanwhile", id)
	}
	if err != nil {
		return fmt.Errorf("api: cancel job: %w", err)
	}
	return c.JSON(http.StatusAccepted, newJobResponse(j))
}
