package api

import (
	"context"
	"fmt"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
)

// submitter is who a job is created for: the caller of POST /v1/jobs, or
// the owner of a template that a run, a CI hook or the scheduler starts.
// Its key's rights, quotas and webhook secret apply either way.
type submitter struct {
	p principal
	// quota is the key's own quota; zero fields take the service's.
	quota apikey.Quota
}

// submitterOf is the caller the authentication middleware admitted.
func submitterOf(c echo.Context) submitter {
	q, _ := c.Get(quotaKey).(apikey.Quota)
	return submitter{p: principalOf(c), quota: q}
}

// submitterFor is the key k acting without a request.
func submitterFor(k apikey.Key) submitter {
	return submitter{p: principal{KeyID: k.ID, Admin: k.Admin, WebhookSecret: k.WebhookSecret}, quota: k.Quota}
}

// submit is the one way a job is created: it defaults spec, charges the
// submission rate, validates the spec against who's limits and the address
// policy, verifies its targets, pins compare_to, takes an active-job slot,
// keeps the webhook secret, stores the job and enqueues it. It returns the
// job and the webhook secret to show (one generated for it). rid names the
// request in logs. Errors are what the client should see (problem.go).
func (s *Server) submit(ctx context.Context, who submitter, rid string, spec job.Spec) (*job.Job, string, error) {
	spec = spec.WithDefaults()
	if err := s.chargeSubmission(ctx, who); err != nil { // quota.go: 429 over the rate, before any DNS or verification request
		return nil, "", err
	}
	if err := spec.Validate(s.limitsFor(who), s.urlChecker(ctx)); err != nil { // targets.go
		return nil, "", err
	}
	if err := s.verifyTargets(ctx, who.p.KeyID, spec); err != nil { // targets.go: 422 for a host without its token
		return nil, "", err
	}
	var err error
	if spec.CompareTo, err = s.resolveCompareTo(ctx, who.p, spec.CompareTo); err != nil { // compare.go: pin it to one job
		return nil, "", err
	}
	j := &job.Job{
		ID:        job.NewID(),
		Owner:     who.p.KeyID,
		Spec:      spec,
		Status:    job.StatusQueued,
		CreatedAt: time.Now().UTC(),
		Progress:  job.Progress{RunsTotal: len(spec.Schedule())},
	}
	if err := s.admitJob(ctx, who, j); err != nil { // quota.go: 429 over the active-job quota
		return nil, "", err
	}
	// From the slot on, what was written for j is discarded unless the job
	// is accepted: a creation that fails half-way (Redis gone or refusing
	// writes between two steps) leaves no job, secret or slot behind.
	accepted := false
	defer func() {
		if !accepted {
			s.discardJob(rid, j)
		}
	}()
	secret, err := s.webhookSecret(ctx, who.p, j) // deliveries.go: kept apart from the job
	if err != nil {
		return nil, "", err
	}
	// Detached, so that a client hanging up between storing and enqueueing
	// does not turn a job that would have been accepted into a discarded one.
	persist, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if err := s.store.CreateJob(persist, j); err != nil {
		return nil, "", fmt.Errorf("api: create job: %w", err)
	}
	if err := s.enqueue(persist, j); err != nil {
		return nil, "", err
	}
	accepted = true // enqueued: the job exists, whatever happens to the answer
	return j, secret, nil
}
