package api

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// principalKey is where the authentication middleware leaves the caller.
const principalKey = "benchq.principal"

// anonymousOwner owns what the open development mode's keyless caller
// creates (admit.AnonymousOwner).
const anonymousOwner = admit.AnonymousOwner

// principalOf returns the caller the authentication middleware admitted:
// the API key behind the request, with its rights and quota, or the
// anonymous caller of the open development mode. Without one (a route
// the middleware did not cover) it is the zero caller, which owns
// nothing and may list nothing.
func principalOf(c echo.Context) admit.Caller {
	p, _ := c.Get(principalKey).(admit.Caller)
	return p
}

// ownedJob loads a job the caller may see. Another key's job is reported
// exactly as a missing one (404), so ids cannot be probed across tenants.
func (s *Server) ownedJob(c echo.Context, id string) (*job.Job, error) {
	return s.ownedJobCtx(c.Request().Context(), principalOf(c), id)
}

func (s *Server) ownedJobCtx(ctx context.Context, p admit.Caller, id string) (*job.Job, error) {
	j, err := s.store.GetJob(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("api: get job: %w", err)
	}
	if !p.Owns(j) {
		return nil, fmt.Errorf("api: get job %s: %w", id, store.ErrNotFound)
	}
	return j, nil
}
