package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// Service-wide defaults of the admission quotas when Config leaves them 0.
const (
	defaultMaxActiveJobs        = 10
	defaultSubmissionsPerMinute = 60
	// What a key may keep stored. Templates: 100 cover every branch and
	// repository a team measures, and 4 MiB holds them at 40 KiB each (a
	// large spec is a few KiB), while a thousand keys at their limit
	// still fit in 4 GiB of Redis. Schedules: each one is read by every
	// scheduler poll and may start a job a minute. Pins: each keeps a
	// job and its runs past the retention for good.
	defaultMaxTemplates     = 100
	defaultMaxTemplateBytes = 4 << 20
	defaultMaxSchedules     = 50
	defaultMaxPins          = 100
)

// activeRetryAfter is the Retry-After of a refusal for too many active
// jobs: when a slot frees depends on the caller's own jobs, so this is a
// polling interval, not a promise.
const activeRetryAfter = 10 * time.Second

// QuotaStore admits jobs against a caller's quotas; *store.Store
// implements it. Both checks run in Redis, so every API replica shares
// them.
type QuotaStore interface {
	AllowSubmission(ctx context.Context, owner string, perMinute int) (store.Submission, error)
	ReserveActive(ctx context.Context, owner, id string, limit int) (store.ActiveSlot, error)
}

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
func (s *Server) templateLimits(ctx context.Context, caller submitter, owner string) (store.TemplateLimits, error) {
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
func (s *Server) ownerQuota(ctx context.Context, caller submitter, owner string) (apikey.Quota, error) {
	if owner == caller.p.KeyID {
		return s.quotaOf(caller), nil
	}
	who, err := s.ownerOf(ctx, owner)
	if err != nil {
		return apikey.Quota{}, err
	}
	return s.quotaOf(who), nil
}

// serviceQuota is the quota of a key that sets nothing, and of the
// anonymous caller of the open mode.
func (s *Server) serviceQuota() apikey.Quota {
	l := *s.cfg.Limits
	q := apikey.Quota{
		MaxConcurrency:       l.MaxConcurrency,
		MaxRequests:          l.MaxRequests,
		MaxDuration:          l.MaxDuration,
		MaxRuns:              l.MaxRuns,
		MaxActiveJobs:        s.cfg.MaxActiveJobs,
		SubmissionsPerMinute: s.cfg.SubmissionsPerMinute,
		MaxTemplates:         s.cfg.MaxTemplates,
		MaxTemplateBytes:     s.cfg.MaxTemplateBytes,
		MaxSchedules:         s.cfg.MaxSchedules,
		MaxPins:              s.cfg.MaxPins,
	}
	return q.Over(apikey.Quota{
		MaxActiveJobs:        defaultMaxActiveJobs,
		SubmissionsPerMinute: defaultSubmissionsPerMinute,
		MaxTemplates:         defaultMaxTemplates,
		MaxTemplateBytes:     defaultMaxTemplateBytes,
		MaxSchedules:         defaultMaxSchedules,
		MaxPins:              defaultMaxPins,
	})
}

// quotaOf is the caller's effective quota: its key's fields over the
// service defaults.
func (s *Server) quotaOf(who submitter) apikey.Quota {
	return who.quota.Over(s.serviceQuota())
}

// limitsFor is what the caller's job spec is validated against: the
// service limits with the key's per-run quota in place (422 beyond them).
func (s *Server) limitsFor(who submitter) job.Limits {
	return who.quota.Limits(*s.cfg.Limits)
}

// chargeSubmission counts one submission against the caller's per-minute
// rate. It runs before a spec is validated or its targets verified: both
// make outbound requests (DNS lookups, verification fetches), which the
// rate must bound as well. POST /v1/targets/verify is charged the same
// way, so the two share the one per-key budget. A refusal is a 429 with
// Retry-After.
func (s *Server) chargeSubmission(ctx context.Context, who submitter) error {
	if s.quotas == nil {
		return nil
	}
	q := s.quotaOf(who)
	sub, err := s.quotas.AllowSubmission(ctx, who.p.KeyID, q.SubmissionsPerMinute)
	if err != nil {
		return fmt.Errorf("api: submission quota: %w", err)
	}
	if !sub.Allowed {
		e := errcode.Newf(errcode.RateLimited, "at most %d submissions (jobs and target verifications) per minute; retry in %s",
			q.SubmissionsPerMinute, sub.RetryAfter.Round(time.Millisecond))
		e.Limit, e.RetryAfter = q.SubmissionsPerMinute, sub.RetryAfter
		return e
	}
	return nil
}

// admitJob takes a slot for a valid job among its owner's queued +
// running jobs (held until the job ends; see store.ReserveActive; a
// creation that fails after it gives the slot back with DiscardJob). A
// refusal is a 429 with Retry-After, the limit, and the current count as
// its value.
func (s *Server) admitJob(ctx context.Context, who submitter, j *job.Job) error {
	if s.quotas == nil {
		return nil
	}
	q := s.quotaOf(who)
	slot, err := s.quotas.ReserveActive(ctx, j.Owner, j.ID, q.MaxActiveJobs)
	if err != nil {
		return fmt.Errorf("api: active-job quota: %w", err)
	}
	if !slot.Admitted {
		e := errcode.Newf(errcode.TooManyActiveJobs, "%d queued or running jobs, limit %d; retry when one ends", slot.Count, q.MaxActiveJobs)
		e.Limit, e.Value, e.RetryAfter = q.MaxActiveJobs, slot.Count, activeRetryAfter
		return e
	}
	return nil
}

// setRetryAfter sets Retry-After in whole seconds, rounded up (RFC 9110
// has no fractions, and 0 would invite an immediate retry).
func setRetryAfter(c echo.Context, d time.Duration) {
	secs := max(int(math.Ceil(d.Seconds())), 1)
	c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
}
