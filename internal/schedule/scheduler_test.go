package schedule_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/schedule"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
)

// fakeClock is a clock the test moves by hand; schedulers read it
// concurrently.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// jobRunner creates a queued job per call in the real store and counts
// the calls per tick.
type jobRunner struct {
	st    *store.Store
	mu    sync.Mutex
	ticks map[time.Time]int
	jobs  []string
}

func (r *jobRunner) RunScheduled(ctx context.Context, t *template.Template, tick time.Time) (*job.Job, error) {
	j := &job.Job{ID: job.NewID(), Owner: t.Owner, Spec: t.Spec, Status: job.StatusQueued, CreatedAt: tick}
	if err := r.st.CreateJob(ctx, j); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ticks[tick]++
	r.jobs = append(r.jobs, j.ID)
	return j, nil
}

func (r *jobRunner) count(tick time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ticks[tick]
}

func (r *jobRunner) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.ticks {
		n += c
	}
	return n
}

// finishAll ends every job created so far, as a worker would.
func (r *jobRunner) finishAll(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	ids := append([]string(nil), r.jobs...)
	r.mu.Unlock()
	for _, id := range ids {
		if _, err := r.st.UpdateJob(t.Context(), id, func(j *job.Job) error {
			if j.Status.Terminal() {
				return nil
			}
			j.Status = job.StatusSucceeded
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

type fixture struct {
	st     *store.Store
	clock  *fakeClock
	runner *jobRunner
}

var t0 = time.Date(2026, 3, 2, 12, 0, 30, 0, time.UTC)

func newFixture(t *testing.T, sched template.Schedule) *fixture {
	t.Helper()
	st := store.New(redistest.Start(t).Client(t), store.Options{})
	tp := &template.Template{Name: "nightly", Owner: "key_a", Schedule: &sched,
		Spec: job.Spec{Targets: []job.Target{{Name: "a", URL: "http://127.0.0.1:1/"}}}}
	if _, err := st.PutTemplate(t.Context(), tp); err != nil {
		t.Fatal(err)
	}
	return &fixture{st: st, clock: &fakeClock{t: t0}, runner: &jobRunner{st: st, ticks: map[time.Time]int{}}}
}

func (f *fixture) schedulers(n int) []*schedule.Scheduler {
	out := make([]*schedule.Scheduler, n)
	for i := range out {
		out[i] = schedule.New(f.st, f.runner, schedule.Config{Clock: f.clock, Grace: 10 * time.Second, Log: slog.New(slog.DiscardHandler)})
	}
	return out
}

// tickAll evaluates every scheduler at once, as replicas polling together.
func tickAll(t *testing.T, ss []*schedule.Scheduler) {
	t.Helper()
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(func() {
			if err := s.Tick(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func (f *fixture) state(t *testing.T) store.ScheduleState {
	t.Helper()
	st, err := f.st.GetScheduleState(t.Context(), "key_a", "nightly")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func minute(n int) time.Time { return time.Date(2026, 3, 2, 12, n, 0, 0, time.UTC) }

func TestEveryMinuteRunsOncePerTick(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d schedulers", n), func(t *testing.T) {
			f := newFixture(t, template.Schedule{Cron: "* * * * *"})
			ss := f.schedulers(n)
			tickAll(t, ss) // 12:00:30: first seen, nothing due
			for m := 1; m <= 5; m++ {
				// Several polls within each minute, at the tick and after.
				for _, sec := range []int{0, 1, 20} {
					f.clock.Set(minute(m).Add(time.Duration(sec) * time.Second))
					tickAll(t, ss)
				}
				if got := f.runner.count(minute(m)); got != 1 {
					t.Fatalf("tick %s ran %d times, want once", minute(m).Format("15:04"), got)
				}
				f.runner.finishAll(t)
			}
			if got := f.runner.total(); got != 5 {
				t.Errorf("%d jobs for 5 ticks", got)
			}
			runs := f.state(t).Runs
			if len(runs) != 5 || runs[0].JobID == "" || !runs[0].Tick.Equal(minute(5)) {
				t.Errorf("recorded runs = %+v, want 5, newest (12:05) first with its job", runs)
			}
		})
	}
}

func TestTickSkippedWhilePreviousRunGoes(t *testing.T) {
	f := newFixture(t, template.Schedule{Cron: "* * * * *"})
	ss := f.schedulers(3)
	tickAll(t, ss)
	f.clock.Set(minute(1))
	tickAll(t, ss)
	// The 12:01 job is still queued at 12:02: the tick is skipped.
	f.clock.Set(minute(2))
	tickAll(t, ss)
	if got := f.runner.count(minute(2)); got != 0 {
		t.Fatalf("12:02 ran %d times while 12:01's job was queued", got)
	}
	st := f.state(t)
	if r := st.Runs[0]; !r.Tick.Equal(minute(2)) || r.JobID != "" || !strings.Contains(r.Skipped, "still queued") {
		t.Fatalf("12:02 recorded as %+v, want skipped naming the queued previous run", r)
	}
	// Once it ended, the next tick runs.
	f.runner.finishAll(t)
	f.clock.Set(minute(3))
	tickAll(t, ss)
	if got := f.runner.count(minute(3)); got != 1 {
		t.Fatalf("12:03 ran %d times after the previous run ended, want once", got)
	}
}

func TestRestartHonoursMissedPolicy(t *testing.T) {
	tests := []struct {
		missed  string
		atStart int // jobs created by the new scheduler at 12:04:30
	}{
		{"", 0},
		{schedule.MissedSkip, 0},
		{schedule.MissedRunOnce, 1},
	}
	for _, tt := range tests {
		t.Run("missed="+tt.missed, func(t *testing.T) {
			f := newFixture(t, template.Schedule{Cron: "* * * * *", Missed: tt.missed})
			old := f.schedulers(1)
			tickAll(t, old)
			f.clock.Set(minute(1))
			tickAll(t, old)
			f.runner.finishAll(t)
			// Restart: a scheduler that evaluated 12:01 already is told
			// again (as a replica just starting would), then the service
			// is down from 12:01:05 to 12:04:30.
			f.clock.Set(minute(1).Add(5 * time.Second))
			fresh := f.schedulers(1)
			tickAll(t, fresh)
			if got := f.runner.count(minute(1)); got != 1 {
				t.Fatalf("12:01 ran %d times across the restart, want once", got)
			}
			f.clock.Set(minute(4).Add(30 * time.Second))
			fresh = f.schedulers(1)
			tickAll(t, fresh)
			tickAll(t, fresh)
			if got := f.runner.total() - 1; got != tt.atStart {
				t.Fatalf("after the downtime %d jobs were created, want %d", got, tt.atStart)
			}
			r := f.state(t).Runs[0]
			if !r.Tick.Equal(minute(4)) || r.Missed != 3 {
				t.Fatalf("record after the downtime = %+v, want tick 12:04 with 3 missed", r)
			}
			if (r.JobID == "") != (tt.atStart == 0) || (tt.atStart == 0 && !strings.Contains(r.Skipped, "missed")) {
				t.Fatalf("record after the downtime = %+v, want job %v", r, tt.atStart == 1)
			}
			// Either way the schedule goes on at the next tick, once.
			f.runner.finishAll(t)
			f.clock.Set(minute(5))
			tickAll(t, f.schedulers(3))
			if got := f.runner.count(minute(5)); got != 1 {
				t.Fatalf("12:05 ran %d times, want once", got)
			}
		})
	}
}

func TestPausedSchedulePassesTicks(t *testing.T) {
	f := newFixture(t, template.Schedule{Cron: "* * * * *", Paused: true})
	ss := f.schedulers(1)
	tickAll(t, ss)
	for m := 1; m <= 3; m++ {
		f.clock.Set(minute(m))
		tickAll(t, ss)
	}
	if got := f.runner.total(); got != 0 {
		t.Fatalf("a paused schedule created %d jobs", got)
	}
	// Resumed, it runs the next tick and counts the paused ones as
	// nothing missed.
	tp, err := f.st.GetTemplate(t.Context(), "key_a", "nightly")
	if err != nil {
		t.Fatal(err)
	}
	tp.Schedule.Paused = false
	if _, err := f.st.PutTemplate(t.Context(), tp); err != nil {
		t.Fatal(err)
	}
	f.clock.Set(minute(4))
	tickAll(t, ss)
	if got := f.runner.count(minute(4)); got != 1 {
		t.Fatalf("12:04 after resume ran %d times, want once", got)
	}
	if r := f.state(t).Runs[0]; r.Missed != 0 {
		t.Errorf("resume recorded %d missed ticks, want 0", r.Missed)
	}
}
