package worker

import (
	"cmp"
	"fmt"
	"time"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/search"
)

// search runs the spec's capacity search after the sweep, target by
// target: each probe an open-model run stored under its probe key
// (job.ProbeKey), the next rate decided by internal/search from the
// target's probes stored so far. Those decide alone, so an attempt that
// resumes a job reads the probes a dead one stored and carries on where
// it stopped, as a sweep skips its stored runs.
func (sw *sweep) search() error {
	se := sw.job.Spec.Search
	if se == nil {
		return nil
	}
	slo, err := se.SLOs()
	if err != nil {
		return fmt.Errorf("%w: search: %w", errNeverRuns, err)
	}
	runs, err := sw.r.st.Runs(sw.ctx, sw.job.ID)
	if err != nil {
		return fmt.Errorf("worker: job %s: read probes: %w", sw.job.ID, err)
	}
	next := map[int]int{} // per target, the next free probe number
	for _, r := range runs {
		if ti, n, ok := r.Probe(); ok {
			next[ti] = max(next[ti], n+1)
		}
	}
	stored := analysis.Probes(runs)
	for ti := range sw.job.Spec.Targets {
		if err := sw.searchTarget(ti, slo, stored[ti], next[ti]); err != nil {
			return err
		}
	}
	return nil
}

// searchTarget probes target ti until the search ends; done are its
// probes already stored, n the number the next one takes.
func (sw *sweep) searchTarget(ti int, slo []job.Threshold, done []job.Run, n int) error {
	se := sw.job.Spec.Search.WithDefaults()
	cfg := se.Config()
	p, ok := sw.firstPoint(ti)
	if !ok {
		return fmt.Errorf("%w: search: target %d has no point", errNeverRuns, ti)
	}
	base, err := sw.planner.Plan(p)
	if err != nil {
		return fmt.Errorf("%w: search of target %d: %w", errNeverRuns, ti, err)
	}
	timeout := cmp.Or(base.Timeout, job.DefaultTimeout)
	probes := make([]search.Probe, len(done))
	for i, r := range done {
		probes[i] = analysis.SearchProbe(slo, r)
	}
	for {
		st := search.Next(cfg, probes)
		if st.Done {
			res := search.Estimate(probes, st.Reason)
			sw.r.log.Info("worker: capacity search ended", "job", sw.job.ID, "target", p.Target,
				"reason", st.Reason, "rate", res.Rate, "ci_low", res.Low, "ci_high", res.High,
				"probes", res.Probes, "requests", res.Requests, "elapsed", res.Elapsed)
			return nil
		}
		if err := sw.interrupted(); err != nil {
			return err
		}
		if len(probes) > 0 {
			if err := sw.wait(max(sw.job.Spec.Sweep.PauseBetweenRuns.Std(), drain(done, timeout))); err != nil {
				return err
			}
		}
		run, err := sw.probe(ti, n, p, se, st)
		if err != nil {
			return err
		}
		probes = append(probes, analysis.SearchProbe(slo, *run))
		done = append(done, *run)
		n++
	}
}

// drain is how long the line a failed probe left at the target takes to
// clear: the requests the probe stopped waiting for are still queued at
// the server, and the next probe would wait behind them and fail however
// low its rate. The line is the requests started but neither completed
// nor failed, served at the rate the probe saw them served; at least the
// longest a completed request waited, and the timeout where nothing
// completed (after which the server's line is its own affair). After a
// probe that passed that is a few holds.
func drain(done []job.Run, timeout time.Duration) time.Duration {
	if len(done) == 0 {
		return 0
	}
	r := done[len(done)-1].Result
	if r == nil || r.OpenModel == nil || r.TimeTakenS <= 0 {
		return 0
	}
	if r.CompleteRequests == 0 {
		return timeout
	}
	started := r.OpenModel.AchievedRate * r.TimeTakenS
	open := started - float64(r.CompleteRequests) - float64(r.FailedRequests)
	served := float64(r.CompleteRequests) / r.TimeTakenS
	d := max(time.Duration(r.PercentilesMs.P100*float64(time.Millisecond)),
		time.Duration(max(open, 0)/served*float64(time.Second)))
	return min(d, timeout)
}

// firstPoint is target ti's first point of the sweep: a probe is planned
// from it (the target's request, TLS, warm-up), with the search's rate,
// duration and cap on requests in flight.
func (sw *sweep) firstPoint(ti int) (job.Point, bool) {
	for _, p := range sw.points {
		if p.TargetIndex == ti {
			return p, true
		}
	}
	return job.Point{}, false
}

// probe runs and stores one probe at st.Rate, and returns it.
func (sw *sweep) probe(ti, n int, p job.Point, se job.Search, st search.Step) (*job.Run, error) {
	plan, err := sw.planner.Plan(p)
	if err != nil {
		return nil, fmt.Errorf("%w: search of target %d: %w", errNeverRuns, ti, err)
	}
	k := job.ProbeKey(ti, n)
	p.Rate, p.Duration, p.Requests, p.Concurrency = st.Rate, se.ProbeDuration, 0, se.Concurrency
	plan.Rate, plan.Duration, plan.Requests, plan.Concurrency = st.Rate, se.ProbeDuration.Std(), 0, se.Concurrency
	sw.progress.update(func(pr *job.Progress) {
		pr.RunsTotal = max(pr.RunsTotal, sw.stored+1)
		pr.CurrentRun, pr.RequestsDone, pr.CurrentRPS = &k, 0, 0
	})
	sw.r.log.Info("worker: capacity probe", "job", sw.job.ID, "target", p.Target, "probe", n, "phase", st.Phase, "rate", st.Rate)
	return sw.measure(k, p, plan)
}
