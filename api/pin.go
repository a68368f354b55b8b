package api

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
)

// JobPinner pins jobs; *store.Store implements it.
type JobPinner interface {
	// PinJobWithin pins (or unpins) job id, refusing a pin that takes
	// its owner past max pinned jobs (a *store.LimitError).
	PinJobWithin(ctx context.Context, id string, pinned bool, max int) (*job.Job, error)
}

// handlePinJob pins a job.
//
//	@Summary		Pin a job
//	@Description	A pinned job, its runs, events and webhook log are kept past the retention, so compare_to (by id or by selector) keeps finding it as a baseline. The latest succeeded job of each template on each branch is kept the same way without a pin.
//	@Tags			jobs
//	@Produce		json
//	@Param			id	path		string	true	"job id"
//	@Success		200	{object}	JobResponse	"pinned: true"
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		404	{object}	Problem
//	@Failure		429	{object}	Problem	"too-many-pins: the job's owner has its most pinned jobs (limit and value name them)"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id}/pin [put]
func (s *Server) handlePinJob(c echo.Context) error { return s.pin(c, true) }

// handleUnpinJob unpins a job.
//
//	@Summary		Unpin a job
//	@Description	The job expires a retention after the unpin, unless it is its template's latest succeeded job on its branch.
//	@Tags			jobs
//	@Produce		json
//	@Param			id	path		string	true	"job id"
//	@Success		200	{object}	JobResponse	"pinned: false"
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		404	{object}	Problem
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id}/pin [delete]
func (s *Server) handleUnpinJob(c echo.Context) error { return s.pin(c, false) }

func (s *Server) pin(c echo.Context, pinned bool) error {
	if s.pinner == nil {
		return errcode.New(errcode.Unavailable, "pinning is not configured on this server")
	}
	id := c.Param("id")
	j, err := s.ownedJob(c, id)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	// A pin counts against the job's owner, whoever pins it.
	q, err := s.ownerQuota(ctx, principalOf(c), j.Owner)
	if err != nil {
		return fmt.Errorf("api: pin job: %w", err)
	}
	j, err = s.pinner.PinJobWithin(ctx, id, pinned, q.MaxPins)
	if err != nil {
		return storageLimit(fmt.Errorf("api: pin job: %w", err))
	}
	return c.JSON(http.StatusOK, newJobResponse(j))
}
