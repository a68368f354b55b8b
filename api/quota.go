package api

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/store"
)

// storageLimit turns a store's limit refusal, wrapped or not, into the
// 429 the client reads: which limit, the limit and the use found, and
// what frees room. Other errors pass unchanged.
func storageLimit(err error) error {
	var le *store.LimitError
	if !errors.As(err, &le) {
		return err
	}
	var qe *errcode.Error
	switch le.Limit {
	case store.LimitTemplates:
		qe = errcode.Newf(errcode.TooManyTemplates, "%d templates stored, limit %d; delete one (DELETE /v1/templates/{name}) to save another", le.Used, le.Max)
	case store.LimitTemplateBytes:
		qe = errcode.Newf(errcode.TemplateBytes, "templates take %d bytes, limit %d; delete or shrink one to make room", le.Used, le.Max)
	case store.LimitSchedules:
		qe = errcode.Newf(errcode.TooManySchedules, "%d templates have a schedule, limit %d; drop a schedule to add another", le.Used, le.Max)
	case store.LimitPins:
		qe = errcode.Newf(errcode.TooManyPins, "%d jobs pinned, limit %d; unpin one (DELETE /v1/jobs/{id}/pin) to pin another", le.Used, le.Max)
	default:
		qe = errcode.Newf(errcode.RepositoryTemplates, "%d templates (of every key) trigger on this repository, limit %d; an admin lists them with GET /v1/templates", le.Used, le.Max)
	}
	qe.Limit, qe.Value = le.Max, le.Used
	return qe
}

// templateLimits are the storage limits of owner's templates: those of
// the caller's key when it is the owner, else (an admin writing another
// key's template) of the owner's key.
func (s *Server) templateLimits(ctx context.Context, caller admit.Caller, owner string) (store.TemplateLimits, error) {
	q, err := s.ownerQuota(ctx, caller, owner)
	if err != nil {
		return store.TemplateLimits{}, err
	}
	return store.TemplateLimits{Templates: q.MaxTemplates, Bytes: q.MaxTemplateBytes, Schedules: q.MaxSchedules,
		PerRepository: maxRepositoryTemplates}, nil
}

// ownerQuota is the effective quota of owner, whose stored things the
// caller writes: the caller's own, or an admin's write counts against
// the owner's key.
func (s *Server) ownerQuota(ctx context.Context, caller admit.Caller, owner string) (apikey.Quota, error) {
	if owner == caller.KeyID {
		return s.admit.Quota(caller), nil
	}
	who, err := s.admit.Owner(ctx, owner)
	if err != nil {
		return apikey.Quota{}, err
	}
	return s.admit.Quota(who), nil
}

// setRetryAfter sets Retry-After in whole seconds, rounded up (RFC 9110
// has no fractions, and 0 would invite an immediate retry).
func setRetryAfter(c echo.Context, d time.Duration) {
	secs := max(int(math.Ceil(d.Seconds())), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
}
