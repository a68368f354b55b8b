package job

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
)

func TestTransitions(t *testing.T) {
	all := []Status{StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusCanceled}
	allowed := map[[2]Status]bool{
		{StatusQueued, StatusRunning}:    true,
		{StatusQueued, StatusCanceled}:   true,
		{StatusRunning, StatusSucceeded}: true,
		{StatusRunning, StatusFailed}:    true,
		{StatusRunning, StatusCanceled}:  true,
		{StatusRunning, StatusQueued}:    true,
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, from := range all {
		for _, to := range all {
			j := &Job{Status: from}
			err := j.Transition(to, now)
			if allowed[[2]Status{from, to}] {
				if err != nil || j.Status != to {
					t.Errorf("Transition(%s -> %s) = %v, status %s, want nil, %s", from, to, err, j.Status, to)
				}
				continue
			}
			if !errors.Is(err, ErrBadTransition) || j.Status != from {
				t.Errorf("Transition(%s -> %s) = %v, status %s, want ErrBadTransition, %s", from, to, err, j.Status, from)
			}
		}
	}
}

func TestTransitionTimes(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	j := New("id", "", validSpec(), t0)
	if j.Status != StatusQueued || j.Progress.RunsTotal != 8 {
		t.Fatalf("New = status %s runs %d, want queued, 8", j.Status, j.Progress.RunsTotal)
	}
	steps := []struct {
		to Status
		at time.Duration
	}{{StatusRunning, time.Second}, {StatusQueued, 2 * time.Second}, {StatusRunning, 3 * time.Second}, {StatusSucceeded, 4 * time.Second}}
	for _, s := range steps {
		if err := j.Transition(s.to, t0.Add(s.at)); err != nil {
			t.Fatalf("Transition(%s) = %v", s.to, err)
		}
	}
	if j.StartedAt == nil || !j.StartedAt.Equal(t0.Add(time.Second)) {
		t.Errorf("StartedAt = %v, want the first start %v", j.StartedAt, t0.Add(time.Second))
	}
	if j.FinishedAt == nil || !j.FinishedAt.Equal(t0.Add(4*time.Second)) {
		t.Errorf("FinishedAt = %v, want %v", j.FinishedAt, t0.Add(4*time.Second))
	}
}

// TestStart: each start numbers a new attempt and records its holder; a
// running job is one whose holder died, taken over as a crash, until the
// deaths with no run stored between them pass the budget's Stalled, or
// all deaths its Total.
func TestStart(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := &now // a running job was started
	budget := CrashBudget{Stalled: 3, Total: 6}
	running := func(attempt, crashes, stalled, runsAtCrash, runsDone int) Job {
		return Job{Status: StatusRunning, StartedAt: at, Attempt: attempt, Crashes: crashes,
			StalledCrashes: stalled, RunsAtCrash: runsAtCrash, Progress: Progress{RunsDone: runsDone}}
	}
	tests := []struct {
		name        string
		job         Job
		budget      CrashBudget
		wantErr     error
		wantAttempt int
		wantCrashes int
		wantStalled int
	}{
		{"first start", Job{Status: StatusQueued}, budget, nil, 1, 0, 0},
		{"after a hand-back", Job{Status: StatusQueued, Attempt: 2, Crashes: 1, StalledCrashes: 1}, budget, nil, 3, 1, 1},
		{"taken over after a crash", running(1, 0, 0, 0, 0), budget, nil, 2, 1, 1},
		{"taken over after a crash, runs stored", running(1, 0, 0, 0, 2), budget, nil, 2, 1, 1},
		{"last stalled crash resumed", running(3, 2, 2, 0, 0), budget, nil, 4, 3, 3},
		{"one stalled crash too many", running(4, 3, 3, 0, 0), budget, ErrCrashLoop, 4, 3, 3},
		{"a run stored since the last crash", running(4, 3, 3, 1, 2), budget, nil, 5, 4, 1},
		{"same runs as at the last crash", running(4, 3, 3, 2, 2), budget, ErrCrashLoop, 4, 3, 3},
		{"last crash in all resumed", running(6, 5, 1, 5, 6), budget, nil, 7, 6, 1},
		{"one crash too many in all, runs stored", running(7, 6, 1, 6, 7), budget, ErrCrashLoop, 7, 6, 1},
		{"no crash resumed", running(1, 0, 0, 0, 0), CrashBudget{}, ErrCrashLoop, 1, 0, 0},
		{"over", Job{Status: StatusSucceeded, Attempt: 1}, budget, ErrBadTransition, 1, 0, 0},
		{"canceled while queued", Job{Status: StatusCanceled}, budget, ErrBadTransition, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := tt.job
			n, err := j.Start("worker-b/7", "task-b", tt.budget, now)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Start = %d, %v; want error %v", n, err, tt.wantErr)
			}
			if j.Attempt != tt.wantAttempt || j.Crashes != tt.wantCrashes || j.StalledCrashes != tt.wantStalled {
				t.Errorf("after Start: attempt %d, crashes %d, stalled %d; want %d, %d, %d",
					j.Attempt, j.Crashes, j.StalledCrashes, tt.wantAttempt, tt.wantCrashes, tt.wantStalled)
			}
			if err != nil {
				if j.Status != tt.job.Status || j.Holder != tt.job.Holder || j.RunsAtCrash != tt.job.RunsAtCrash {
					t.Errorf("refused Start changed the job: %s held by %q, runs at crash %d", j.Status, j.Holder, j.RunsAtCrash)
				}
				return
			}
			if tt.job.Status == StatusRunning && j.RunsAtCrash != j.Progress.RunsDone {
				t.Errorf("after a counted crash: runs at crash %d, want the %d stored", j.RunsAtCrash, j.Progress.RunsDone)
			}
			if n != j.Attempt || j.Status != StatusRunning || j.Holder != "worker-b/7" || j.CurrentTask() != "task-b" || j.StartedAt == nil {
				t.Errorf("Start = %d: job %s held by %q under %q, started %v; want attempt %d running, held by worker-b/7 under task-b",
					n, j.Status, j.Holder, j.CurrentTask(), j.StartedAt, j.Attempt)
			}
		})
	}
}

// TestCrashLoopSaysWhy: the reason a job is given up on names the budget
// it passed, for the job's error.
func TestCrashLoopSaysWhy(t *testing.T) {
	b := CrashBudget{Stalled: 3, Total: 10}
	tests := []struct {
		name string
		job  Job
		want string
	}{
		{"within", Job{Crashes: 2, StalledCrashes: 2}, ""},
		{"stalled", Job{Attempt: 4, Crashes: 3, StalledCrashes: 3}, "died 4 times in a row with no run stored in between (attempt 4 last), and a job is resumed after at most 3 such deaths"},
		{"in all", Job{Attempt: 11, Crashes: 10, StalledCrashes: 1, RunsAtCrash: 9, Progress: Progress{RunsDone: 10}}, "died 11 times (attempt 11 last), and a job is resumed after at most 10 deaths in all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.job.CrashLoop(b)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("CrashLoop = %q, want it to say %q", got, tt.want)
			}
		})
	}
}

// TestTransitionAs: only the attempt that holds the job moves it.
func TestTransitionAs(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		attempt int
		to      Status
		wantErr error
	}{
		{"holder finishes", 2, StatusSucceeded, nil},
		{"holder hands back", 2, StatusQueued, nil},
		{"stale hand-back", 1, StatusQueued, ErrStaleAttempt},
		{"stale finish", 1, StatusSucceeded, ErrStaleAttempt},
		{"holder breaks the lifecycle", 2, StatusRunning, ErrBadTransition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := Job{ID: "j", Status: StatusRunning, Attempt: 2, Holder: "worker-b/7"}
			err := j.TransitionAs(tt.attempt, tt.to, now)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("TransitionAs(%d, %s) = %v, want %v", tt.attempt, tt.to, err, tt.wantErr)
			}
			if want := map[bool]Status{true: tt.to, false: StatusRunning}[err == nil]; j.Status != want {
				t.Errorf("status %s, want %s", j.Status, want)
			}
		})
	}
}

func TestCurrentTask(t *testing.T) {
	if got := (&Job{ID: "j1"}).CurrentTask(); got != "j1" {
		t.Errorf("CurrentTask of a never-started job = %q, want its own task j1", got)
	}
	if got := (&Job{ID: "j1", Task: "j1:resume:1"}).CurrentTask(); got != "j1:resume:1" {
		t.Errorf("CurrentTask = %q, want the resume task", got)
	}
}

func TestProgressDone(t *testing.T) {
	run := func(complete int64) Run { return Run{Result: &abreport.Report{CompleteRequests: complete}} }
	tests := []struct {
		name string
		runs []Run
		want int64
	}{
		{"no runs", nil, 0},
		{"runs summed", []Run{run(200), run(150)}, 350},
		{"a run without result", []Run{run(10), {}}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Progress{RunsTotal: 2, RunsDone: 2, RequestsDone: 7, CurrentRPS: 99, CurrentRun: &RunKey{}}
			p.Done(tt.runs)
			if p.RequestsDone != tt.want || p.CurrentRPS != 0 || p.CurrentRun != nil || p.RunsDone != 2 {
				t.Errorf("Done = %+v, want requests_done %d, no current run or rate, runs_done kept", p, tt.want)
			}
		})
	}
}
