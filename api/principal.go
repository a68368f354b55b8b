package api

import (
	"context"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// principalKey is where the authentication middleware leaves the caller.
const principalKey = "benchq.principal"

// principal is who made a request: the API key behind it, or the
// anonymous caller of the open development mode.
type principal struct {
	KeyID string
	// Admin keys see and manage every job.
	Admin bool
	// WebhookSecret, when the key has one ("whsec_..."), signs the webhooks
	// of its jobs instead of a secret generated per job.
	WebhookSecret string
}

// anonymousOwner is the owner of what the open development mode's
// keyless caller creates: its jobs, targets, quota counters and
// Idempotency-Keys. It is an owner like any key's (key ids are "key_..."),
// never "", which store filters read as "every owner".
const anonymousOwner = "anonymous"

// principalOf returns the caller the authentication middleware admitted.
// Without one (a route the middleware did not cover) it is the zero
// principal, which owns nothing and may list nothing.
func principalOf(c echo.Context) principal {
	p, _ := c.Get(principalKey).(principal)
	return p
}

// owns reports whether the caller may see job j: its owner, or an admin.
func (p principal) owns(j *job.Job) bool {
	return p.Admin || p.KeyID != "" && j.Owner == p.KeyID
}

// ownedJob loads a job the caller may see. Another key's job is reported
// exactly as a missing one (404), so ids cannot be probed across tenants.
func (s *Server) ownedJob(c echo.Context, id string) (*job.Job, error) {
	return s.ownedJobCtx(c.Request().Context(), principalOf(c), id)
}

func (s *Server) ownedJobCtx(ctx context.Context, p principal, id string) (*job.Job, error) {
	j, err := s.store.GetJob(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("api: get job: %w", err)
	}
	if !p.owns(j) {
		return nil, fmt.Errorf("api: get job %s: %w", id, store.ErrNotFound)
	}
	return j, nil
}
