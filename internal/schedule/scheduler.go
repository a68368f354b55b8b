package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
)

// Clock tells the scheduler the time; tests move a fake one by hand.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Store is the state the scheduler keeps; *store.Store implements it.
type Store interface {
	ListAllTemplates(ctx context.Context) ([]*template.Template, error)
	GetJob(ctx context.Context, id string) (*job.Job, error)
	StartSchedule(ctx context.Context, owner, name string, since time.Time) (time.Time, error)
	ClaimTick(ctx context.Context, owner, name string, tick time.Time) (bool, error)
	RecordScheduledRun(ctx context.Context, owner, name string, r store.ScheduledRun) error
	// GetScheduleTick reads the claimed tick and the last job (no runs).
	GetScheduleTick(ctx context.Context, owner, name string) (store.ScheduleState, error)
}

// Runner creates the job of one tick of template t, for t's owner, as a
// run of the template without values would; *admit.Admitter implements
// it.
type Runner interface {
	RunScheduled(ctx context.Context, t *template.Template, tick time.Time) (*job.Job, error)
}

// Config configures a Scheduler; zero fields take the defaults.
type Config struct {
	Clock Clock // default: the system clock
	// Poll is how often Run evaluates the schedules (default 1 s): a tick
	// fires at most this late.
	Poll time.Duration
	// Grace is how late a tick may be evaluated and still run on time
	// (default 30 s); a later one counts as missed, and the missed-run
	// policy decides.
	Grace time.Duration
	Log   *slog.Logger
}

// Scheduler fires the due ticks of every template's schedule.
type Scheduler struct {
	st     Store
	runner Runner
	cfg    Config
}

// New returns a Scheduler over st creating jobs through runner.
func New(st Store, runner Runner, cfg Config) *Scheduler {
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Grace <= 0 {
		cfg.Grace = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Scheduler{st: st, runner: runner, cfg: cfg}
}

// Run evaluates the schedules every Poll until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("schedule: evaluate", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick evaluates every template's schedule at the clock's time once.
// Errors of one template are logged and do not stop the others; the
// error is the listing's.
func (s *Scheduler) Tick(ctx context.Context) error {
	tpls, err := s.st.ListAllTemplates(ctx)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	now := s.cfg.Clock.Now()
	for _, t := range tpls {
		if t.Schedule == nil {
			continue
		}
		p, err := Parse(*t.Schedule)
		if err != nil { // stored before validation existed, or by hand
			s.cfg.Log.Warn("schedule: template's schedule does not parse", "owner", t.Owner, "template", t.Name, "err", err)
			continue
		}
		if err := s.evaluate(ctx, t, p, now); err != nil {
			s.cfg.Log.Warn("schedule: evaluate template", "owner", t.Owner, "template", t.Name, "err", err)
		}
	}
	return nil
}

// maxDue bounds the ticks counted after a long downtime.
const maxDue = 100_000

// evaluate fires t's newest due tick, if any, once its claim succeeds.
func (s *Scheduler) evaluate(ctx context.Context, t *template.Template, p *Plan, now time.Time) error {
	ref := t.Owner + "/" + t.Name
	st, err := s.st.GetScheduleTick(ctx, t.Owner, t.Name)
	if err != nil {
		return err
	}
	if st.Tick.IsZero() { // first seen: earlier ticks were never due
		_, err := s.st.StartSchedule(ctx, t.Owner, t.Name, now)
		return err
	}
	var latest time.Time
	missed := 0
	for tick, n := p.Next(st.Tick), 0; !tick.IsZero() && !p.FireAt(ref, tick).After(now) && n < maxDue; tick, n = p.Next(tick), n+1 {
		if !latest.IsZero() {
			missed++
		}
		latest = tick
	}
	if latest.IsZero() {
		return nil
	}
	if ok, err := s.st.ClaimTick(ctx, t.Owner, t.Name, latest); err != nil || !ok {
		return err
	}
	if p.Paused { // paused ticks pass unrecorded; resuming misses none
		return nil
	}
	late := now.Sub(p.FireAt(ref, latest)) > s.cfg.Grace
	if late {
		missed++
	}
	rec := store.ScheduledRun{Tick: latest.UTC(), FiredAt: now.UTC(), Missed: missed}
	if late && p.Missed == MissedSkip {
		rec.Skipped = fmt.Sprintf("%d tick(s) missed while no scheduler ran; missed-run policy %q", missed, MissedSkip)
		return s.record(ctx, t, rec)
	}
	if st.LastJob != "" {
		prev, err := s.st.GetJob(ctx, st.LastJob)
		switch {
		case err == nil && !prev.Status.Terminal():
			rec.Skipped = fmt.Sprintf("the previous run, job %s, is still %s", prev.ID, prev.Status)
			return s.record(ctx, t, rec)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	j, err := s.runner.RunScheduled(ctx, t, latest)
	if err != nil {
		rec.Skipped = "the job could not be created: " + err.Error()
		s.cfg.Log.Warn("schedule: create job", "owner", t.Owner, "template", t.Name, "tick", latest, "err", err)
		return s.record(ctx, t, rec)
	}
	rec.JobID = j.ID
	s.cfg.Log.Info("schedule: job created", "owner", t.Owner, "template", t.Name, "tick", latest, "job", j.ID, "missed", missed)
	return s.record(ctx, t, rec)
}

func (s *Scheduler) record(ctx context.Context, t *template.Template, r store.ScheduledRun) error {
	if r.Skipped != "" {
		s.cfg.Log.Info("schedule: tick skipped", "owner", t.Owner, "template", t.Name, "tick", r.Tick, "reason", r.Skipped)
	}
	return s.st.RecordScheduledRun(ctx, t.Owner, t.Name, r)
}
