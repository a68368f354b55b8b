package admit

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
)

// TemplateRun is one run of a template: the values of its placeholders,
// the labels of what started it (a trigger's repo, branch, commit, pr; a
// schedule's own) and the Source that names it in the logs.
type TemplateRun struct {
	Values map[string]string
	Labels map[string]string
	// Notify is where a trigger's job reports back (the event's forge,
	// repository, commit and request), put over the template's own
	// notify (job.Notify.Over); nil keeps the template's.
	Notify *job.Notify
	Source Source
}

// scheduleLabels are the labels of a job a schedule's tick started.
var scheduleLabels = map[string]string{"trigger": "schedule"}

// RunTemplate creates one job from t: the one way a template becomes a
// job, for a run through the API, a CI delivery and a schedule. The job
// belongs to t's owner, with that key's rights, quotas and webhook
// secret, and goes through Create as any job does. It carries t's
// labels, then run.Labels, then template=<t.Name>. It returns the job and
// the webhook secret generated for it, if any. A revoked owner runs
// nothing (store.ErrNotFound).
func (a *Admitter) RunTemplate(ctx context.Context, t *template.Template, run TemplateRun) (*job.Job, string, error) {
	who, err := a.Owner(ctx, t.Owner)
	if err != nil {
		return nil, "", err
	}
	spec, err := t.Render(run.Values)
	if err != nil {
		return nil, "", err
	}
	labels := maps.Clone(spec.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, run.Labels)
	labels[job.LabelTemplate] = t.Name
	spec.Labels = labels
	spec.Notify = run.Notify.Over(spec.Notify)
	if spec.Name == "" {
		spec.Name = t.Name
	}
	return a.Create(ctx, who, spec, run.Source)
}

// RunScheduled creates the job of a schedule's tick: a run of t without
// values, labelled trigger=schedule. It is the scheduler's Runner.
func (a *Admitter) RunScheduled(ctx context.Context, t *template.Template, tick time.Time) (*job.Job, error) {
	j, _, err := a.RunTemplate(ctx, t, TemplateRun{
		Labels: maps.Clone(scheduleLabels),
		Source: Source{Via: ViaSchedule, Tick: tick},
	})
	return j, err
}

// Owner is the caller the key owner is: the key by that id, or the open
// mode's anonymous caller. A revoked key is not found.
func (a *Admitter) Owner(ctx context.Context, owner string) (Caller, error) {
	if owner == AnonymousOwner {
		return Caller{KeyID: AnonymousOwner}, nil
	}
	if a.deps.Keys == nil {
		return Caller{}, errcode.New(errcode.Unavailable, "templates are not configured on this server")
	}
	k, err := a.deps.Keys.KeyByID(ctx, owner)
	if err != nil {
		return Caller{}, fmt.Errorf("admit: owner of template: %w", err)
	}
	if k.Revoked() {
		return Caller{}, fmt.Errorf("admit: owner %s of template was revoked: %w", owner, store.ErrNotFound)
	}
	return CallerOf(k), nil
}
