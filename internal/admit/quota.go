package admit

import (
	"context"
	"fmt"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// Service-wide defaults of the quotas when Config.Quota leaves them 0.
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

// serviceQuota is the quota of a key that sets nothing, and of the
// anonymous caller of the open mode.
func serviceQuota(cfg Config) apikey.Quota {
	q, l := cfg.Quota, cfg.Limits
	q.MaxConcurrency, q.MaxRequests, q.MaxDuration, q.MaxRuns = l.MaxConcurrency, l.MaxRequests, l.MaxDuration, l.MaxRuns
	return q.Over(apikey.Quota{
		MaxActiveJobs:        defaultMaxActiveJobs,
		SubmissionsPerMinute: defaultSubmissionsPerMinute,
		MaxTemplates:         defaultMaxTemplates,
		MaxTemplateBytes:     defaultMaxTemplateBytes,
		MaxSchedules:         defaultMaxSchedules,
		MaxPins:              defaultMaxPins,
	})
}

// Quota is who's effective quota: its key's fields over the service's.
func (a *Admitter) Quota(who Caller) apikey.Quota {
	return who.Quota.Over(a.service)
}

// Limits is what who's job spec is validated against: the service
// limits with the key's per-run quota in place (422 beyond them).
func (a *Admitter) Limits(who Caller) job.Limits {
	return who.Quota.Limits(*a.cfg.Limits)
}

// ChargeSubmission counts one submission against who's per-minute rate.
// Create charges it before a spec is validated or its targets verified:
// both make outbound requests (DNS lookups, verification fetches), which
// the rate must bound as well. A target verification is charged the same
// way, so the two share the one per-key budget. A refusal is
// errcode.RateLimited with RetryAfter.
func (a *Admitter) ChargeSubmission(ctx context.Context, who Caller) error {
	if a.deps.Quotas == nil {
		return nil
	}
	q := a.Quota(who)
	sub, err := a.deps.Quotas.AllowSubmission(ctx, who.KeyID, q.SubmissionsPerMinute)
	if err != nil {
		return fmt.Errorf("admit: submission quota: %w", err)
	}
	if !sub.Allowed {
		e := errcode.Newf(errcode.RateLimited, "at most %d submissions (jobs and target verifications) per minute; retry in %s",
			q.SubmissionsPerMinute, sub.RetryAfter.Round(time.Millisecond))
		e.Limit, e.RetryAfter = q.SubmissionsPerMinute, sub.RetryAfter
		return e
	}
	return nil
}

// reserveActive takes a slot for a valid job among its owner's queued +
// running jobs (held until the job ends; see store.ReserveActive; a
// creation that fails after it gives the slot back with DiscardJob). A
// refusal is errcode.TooManyActiveJobs with RetryAfter, the limit, and
// the current count as its value.
func (a *Admitter) reserveActive(ctx context.Context, who Caller, j *job.Job) error {
	if a.deps.Quotas == nil {
		return nil
	}
	q := a.Quota(who)
	slot, err := a.deps.Quotas.ReserveActive(ctx, j.Owner, j.ID, q.MaxActiveJobs)
	if err != nil {
		return fmt.Errorf("admit: active-job quota: %w", err)
	}
	if !slot.Admitted {
		e := errcode.Newf(errcode.TooManyActiveJobs, "%d queued or running jobs, limit %d; retry when one ends", slot.Count, q.MaxActiveJobs)
		e.Limit, e.Value, e.RetryAfter = q.MaxActiveJobs, slot.Count, activeRetryAfter
		return e
	}
	return nil
}
