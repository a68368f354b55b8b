package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/schedule"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
)

// ScheduleStore reads what the scheduler recorded of a template's
// schedule; *store.Store implements it.
type ScheduleStore interface {
	GetScheduleState(ctx context.Context, owner, name string) (store.ScheduleState, error)
}

var errNoSchedule = errors.New("api: the template has no schedule")

// validateTemplate checks a template as the store keeps it and its
// schedule as the scheduler reads it, every problem at once.
func validateTemplate(t *template.Template) error {
	var probs []job.FieldError
	for _, err := range []error{t.Validate(), schedule.Validate(t.Schedule)} {
		ve, invalid := job.AsInvalid(err)
		switch {
		case invalid:
			probs = append(probs, ve.Problems...)
		case err != nil:
			return err
		}
	}
	if len(probs) > 0 {
		return job.Invalid(probs)
	}
	return nil
}

// ScheduleResponse is one template's schedule, when it fires next and
// what its latest ticks did.
type ScheduleResponse struct {
	Template string       `json:"template" example:"checkout-main"`
	Owner    string       `json:"owner" example:"key_01JC3W9Q5V1ZK2M4N6P8R0T2V4"`
	Cron     string       `json:"cron" example:"0 3 * * *"`
	Timezone string       `json:"timezone" example:"Europe/Berlin"`
	Jitter   job.Duration `json:"jitter,omitempty" swaggertype:"string" example:"30s"`
	Paused   bool         `json:"paused"`
	Missed   string       `json:"missed" example:"skip"`
	// NextRun is null while paused, and for an expression that never
	// fires (such as "0 0 30 2 *").
	NextRun *time.Time `json:"next_run"`
	// LastRuns are the latest ticks, newest first.
	LastRuns []ScheduledRunResponse `json:"last_runs"`
}

// ScheduledRunResponse is what one tick did: the job it created, with
// that job's status and verdict now, or why it created none.
type ScheduledRunResponse struct {
	Tick    time.Time `json:"tick"`
	FiredAt time.Time `json:"fired_at"`
	JobID   string    `json:"job_id,omitempty"`
	// Status is "" once the job expired.
	Status  job.Status `json:"status,omitempty"`
	Verdict string     `json:"verdict,omitempty"`
	Skipped string     `json:"skipped,omitempty" example:"the previous run, job 01JC..., is still running"`
	Missed  int        `json:"missed,omitempty"`
}

// ListSchedulesResponse lists the caller's schedules by template name.
type ListSchedulesResponse struct {
	Schedules []ScheduleResponse `json:"schedules"`
}

func (s *Server) scheduleResponse(ctx context.Context, t *template.Template, now time.Time) (ScheduleResponse, error) {
	sc := *t.Schedule
	out := ScheduleResponse{Template: t.Name, Owner: t.Owner, Cron: sc.Cron, Timezone: sc.Timezone, Jitter: sc.Jitter,
		Paused: sc.Paused, Missed: sc.Missed, LastRuns: []ScheduledRunResponse{}}
	if out.Timezone == "" {
		out.Timezone = "UTC"
	}
	p, err := schedule.Parse(sc)
	if err == nil {
		out.Missed = p.Missed
		if next := p.NextRun(t.Owner+"/"+t.Name, now); !next.IsZero() && !sc.Paused {
			next = next.UTC()
			out.NextRun = &next
		}
	}
	if s.schedules == nil {
		return out, nil
	}
	st, err := s.schedules.GetScheduleState(ctx, t.Owner, t.Name)
	if err != nil {
		return out, fmt.Errorf("api: schedule of %s: %w", t.Name, err)
	}
	for _, r := range st.Runs {
		rr := ScheduledRunResponse{Tick: r.Tick, FiredAt: r.FiredAt, JobID: r.JobID, Skipped: r.Skipped, Missed: r.Missed}
		if r.JobID != "" {
			j, err := s.store.GetJob(ctx, r.JobID)
			switch {
			case err == nil:
				rr.Status, rr.Verdict = j.Status, j.Verdict
			case !errors.Is(err, store.ErrNotFound):
				return out, fmt.Errorf("api: schedule of %s: job %s: %w", t.Name, r.JobID, err)
			}
		}
		out.LastRuns = append(out.LastRuns, rr)
	}
	return out, nil
}

// handleListSchedules lists the schedules of the caller's templates.
//
//	@Summary		List schedules
//	@Description	Every template of the caller's key that has a schedule, with its next run and its latest ticks: the job each created (with its status and verdict now), or why a tick created none (the previous run still going, ticks missed while no scheduler ran).
//	@Tags			schedules
//	@Produce		json
//	@Param			owner	query		string	false	"an admin's: the key id whose schedules to list"
//	@Success		200		{object}	ListSchedulesResponse
//	@Failure		401		{object}	Problem	"no valid API key"
//	@Failure		503		{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503		{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/schedules [get]
func (s *Server) handleListSchedules(c echo.Context) error {
	st, owner, err := s.ownedTemplates(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	list, err := st.ListTemplates(ctx, owner)
	if err != nil {
		return fmt.Errorf("api: list schedules: %w", err)
	}
	sort.Slice(list, func(i, k int) bool { return list[i].Name < list[k].Name })
	out := ListSchedulesResponse{Schedules: []ScheduleResponse{}}
	now := time.Now()
	for _, t := range list {
		if t.Schedule == nil {
			continue
		}
		r, err := s.scheduleResponse(ctx, t, now)
		if err != nil {
			return err
		}
		out.Schedules = append(out.Schedules, r)
	}
	return c.JSON(http.StatusOK, out)
}

// handlePauseSchedule stops a template's schedule firing.
//
//	@Summary		Pause a schedule
//	@Description	The template's ticks pass without a job until it is resumed; ticks passed while paused do not count as missed. The same as PUT /v1/templates/{name} with schedule.paused true.
//	@Tags			schedules
//	@Produce		json
//	@Param			name	path		string	true	"template name"
//	@Param			owner	query		string	false	"an admin's: the key id owning the template"
//	@Success		200		{object}	ScheduleResponse
//	@Failure		401		{object}	Problem	"no valid API key"
//	@Failure		404		{object}	Problem	"no such template of the caller's key, or it has no schedule"
//	@Failure		503		{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503		{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/schedules/{name}/pause [post]
func (s *Server) handlePauseSchedule(c echo.Context) error { return s.setPaused(c, true) }

// handleResumeSchedule lets a paused schedule fire again.
//
//	@Summary		Resume a schedule
//	@Description	The schedule fires from its next tick on.
//	@Tags			schedules
//	@Produce		json
//	@Param			name	path		string	true	"template name"
//	@Param			owner	query		string	false	"an admin's: the key id owning the template"
//	@Success		200		{object}	ScheduleResponse
//	@Failure		401		{object}	Problem	"no valid API key"
//	@Failure		404		{object}	Problem	"no such template of the caller's key, or it has no schedule"
//	@Failure		503		{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503		{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/schedules/{name}/resume [post]
func (s *Server) handleResumeSchedule(c echo.Context) error { return s.setPaused(c, false) }

func (s *Server) setPaused(c echo.Context, paused bool) error {
	t, err := s.ownedTemplate(c)
	if err != nil {
		return err
	}
	if t.Schedule == nil {
		return errcode.Wrapf(errNoSchedule, errcode.NotFound, "template %q has no schedule; PUT %s with a schedule adds one", t.Name, templatePath(t.Name))
	}
	ctx := c.Request().Context()
	// Written even when unchanged: the answer then always means "stored".
	t.Schedule.Paused = paused
	// Pausing adds nothing a storage limit counts (a flag of a few
	// bytes), so it never meets one: a key at its limit can still pause.
	if _, err := s.templates.PutTemplateWithin(ctx, t, store.TemplateLimits{}); err != nil {
		return fmt.Errorf("api: pause schedule: %w", err)
	}
	r, err := s.scheduleResponse(ctx, t, time.Now())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}
