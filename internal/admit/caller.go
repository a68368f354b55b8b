package admit

import (
	"context"
	"fmt"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// AnonymousOwner is the owner of what the open development mode's
// keyless caller creates: its jobs, targets, quota counters and
// Idempotency-Keys. It is an owner like any key's (key ids are "key_..."),
// never "", which store filters read as "every owner".
const AnonymousOwner = "anonymous"

// Caller is who a job is created for: the API key of a request, or the
// owner of a template that a run, a CI delivery or a schedule starts.
// Its key's rights, quota and webhook secret apply either way. The zero
// Caller owns nothing and may create nothing it could see.
type Caller struct {
	// KeyID owns what the caller creates; AnonymousOwner in the open mode.
	KeyID string
	// Admin keys see and manage every job.
	Admin bool
	// WebhookSecret, when the key has one ("whsec_..."), signs the
	// webhooks of its jobs instead of a secret generated per job.
	WebhookSecret string
	// Quota is the key's own quota; zero fields take the service's.
	Quota apikey.Quota
}

// CallerOf is the caller key k is.
func CallerOf(k apikey.Key) Caller {
	return Caller{KeyID: k.ID, Admin: k.Admin, WebhookSecret: k.WebhookSecret, Quota: k.Quota}
}

// Owns reports whether the caller may see job j: its owner, or an admin.
func (c Caller) Owns(j *job.Job) bool {
	return c.Admin || c.KeyID != "" && j.Owner == c.KeyID
}

// JobGetter loads a job by id; *store.Store implements it.
type JobGetter interface {
	GetJob(ctx context.Context, id string) (*job.Job, error)
}

// Job loads job id from jobs if the caller may see it. Another key's job
// is reported exactly as a missing one (store.ErrNotFound), so ids cannot
// be probed across tenants.
func (c Caller) Job(ctx context.Context, jobs JobGetter, id string) (*job.Job, error) {
	j, err := jobs.GetJob(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("admit: get job: %w", err)
	}
	if !c.Owns(j) {
		return nil, fmt.Errorf("admit: get job %s: %w", id, store.ErrNotFound)
	}
	return j, nil
}
