package jobend

import (
	"context"
	"fmt"
	"time"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// Change point search at a job's end.
const (
	// ChangeWindow is how many of a template's latest succeeded jobs the
	// search reads: the trends API's default series.
	ChangeWindow = 50
	// changeTimeout bounds the search, which only follows the end.
	changeTimeout = 20 * time.Second
)

// ChangePointStore keeps the change points found (store/changepoints.go);
// *store.Store implements it.
type ChangePointStore interface {
	RecordChangePoints(ctx context.Context, owner, template string, found []job.ChangePoint, announce bool) (kept, fresh []job.ChangePoint, err error)
}

// ChangePointNotifier sends the trend.change_point event of the job whose
// end found new change points; the worker's WebhookNotifier implements it.
type ChangePointNotifier interface {
	NotifyChangePoints(ctx context.Context, j *job.Job, found []job.ChangePoint) error
}

// HistoryQuery is the history a job of a template belongs to: the
// template's succeeded jobs of the job's owner, of the job's branch when
// it has one.
func HistoryQuery(j *job.Job) (template, branch string, labels map[string]string) {
	template = j.Spec.Labels[job.LabelTemplate]
	branch = j.Spec.Labels[job.LabelBranch]
	labels = map[string]string{job.LabelTemplate: template}
	if branch != "" {
		labels[job.LabelBranch] = branch
	}
	return template, branch, labels
}

// findChangePoints looks for change points in the history of succeeded
// job j's template (its branch's, when it has one), over each metric of
// analysis.ChangeMetrics and each testbed apart, as the spec's
// change_points options say; keeps them; and sends the event of those no
// earlier job's end announced. It only follows the end, so a failure is
// logged, never returned to the end.
func (e *Ender) findChangePoints(ctx context.Context, j *job.Job) {
	cs, ok := e.st.(ChangePointStore)
	if !ok || j.Status != job.StatusSucceeded || j.Spec.Labels[job.LabelTemplate] == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), changeTimeout)
	defer cancel()
	fresh, err := FindChangePoints(ctx, e.st, cs, j)
	if err != nil {
		e.log.Warn("jobend: change points of the template's history", "job", j.ID, "err", err)
		return
	}
	if len(fresh) == 0 {
		return
	}
	e.log.Info("jobend: new change points in the template's history", "job", j.ID, "template", j.Spec.Labels[job.LabelTemplate], "change_points", len(fresh))
	if n, ok := e.notifier.(ChangePointNotifier); ok {
		if err := n.NotifyChangePoints(ctx, j, fresh); err != nil {
			e.log.Warn("jobend: trend.change_point event not queued", "job", j.ID, "err", err)
		}
	}
}

// FindChangePoints is findChangePoints' search and record: the change
// points no earlier end announced.
func FindChangePoints(ctx context.Context, st BaselineSource, cs ChangePointStore, j *job.Job) ([]job.ChangePoint, error) {
	template, branch, labels := HistoryQuery(j)
	jobs, err := History(ctx, st, j.Owner, labels, time.Time{}, ChangeWindow, "")
	if err != nil {
		return nil, err
	}
	maxP, minMag := j.Spec.ChangePoints.Values()
	now := time.Now()
	var found []job.ChangePoint
	for _, m := range analysis.ChangeMetrics(j.Spec) {
		q := analysis.ChangeQuery{Template: template, Branch: branch, Metric: m, MaxPValue: maxP, MinMagnitude: minMag}
		found = append(found, analysis.ChangePoints(q, jobs, now)...)
	}
	_, fresh, err := cs.RecordChangePoints(ctx, j.Owner, template, found, true)
	if err != nil {
		return nil, fmt.Errorf("jobend: %w", err)
	}
	return fresh, nil
}
