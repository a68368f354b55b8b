package worker

import (
	"fmt"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/measure"
)

// jobAborted ends a sweep whose run broke a threshold marked to abort the
// job: the job ends failed with the message, which is written for the
// client that reads the job's error.
type jobAborted struct{ why string }

func (e *jobAborted) Error() string { return e.why }

// watchAborts sets plan's Watch to judge the spec's thresholds marked to
// abort that apply to p's target, and for a capacity search's probe (k a
// probe key) the SLO's objectives that can be judged while it goes; nil
// when there are none.
func (sw *sweep) watchAborts(k job.RunKey, p job.Point, plan *measure.Plan) *job.AbortWatch {
	rules := sw.job.Spec.AbortRules(p.Target)
	if _, _, probe := k.Probe(); probe && sw.job.Spec.Search != nil {
		rules = append(rules, sw.job.Spec.Search.AbortRules()...)
	}
	w := job.NewAbortWatch(rules, *plan)
	if w != nil {
		plan.Watch = w.Watch
	}
	return w
}

// markAborted records on run that w's threshold ended it, and returns the
// error that ends the job when the threshold says so.
func markAborted(run *job.Run, w *job.AbortWatch, m *measure.Measurement) error {
	rule := w.Fired()
	if rule == nil || m == nil || m.Stopped == "" {
		return nil
	}
	run.Aborted, run.AbortedBy, run.AbortReason = true, rule.Text, m.Stopped
	if rule.Scope != job.AbortJob {
		return nil
	}
	return &jobAborted{why: fmt.Sprintf("threshold %q aborted the job on target %q (point %d, repeat %d): %s",
		rule.Text, run.Target, run.Point, run.Repeat, m.Stopped)}
}
