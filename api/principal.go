package api

import (
	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/job"
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
	return principalOf(c).Job(c.Request().Context(), s.store, id)
}
