package jobend

import (
	"context"

	"github.com/benchq/benchq/internal/job"
)

// releaseTargets gives up the ended job's leases on its target hosts and
// its places in their queues, so the next job waiting for a host gets it
// at once. A release that fails is only logged: the leases run out one
// job lease later by themselves, the queue places once nobody asks.
func (e *Ender) releaseTargets(ctx context.Context, j *job.Job, retry func(context.Context, func(context.Context) error) error) {
	hosts := j.Spec.TargetHosts()
	if err := retry(ctx, func(ctx context.Context) error {
		return e.st.ReleaseTargets(ctx, j.ID, hosts)
	}); err != nil {
		e.log.Warn("jobend: release target leases", "job", j.ID, "hosts", hosts, "err", err)
	}
}
