package job

import (
	"errors"
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
// crashes pass the retries.
func TestStart(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := &now // a running job was started
	tests := []struct {
		name        string
		job         Job
		retries     int
		wantErr     error
		wantAttempt int
		wantCrashes int
	}{
		{"first start", Job{Status: StatusQueued}, 3, nil, 1, 0},
		{"after a hand-back", Job{Status: StatusQueued, Attempt: 2, Crashes: 1}, 3, nil, 3, 1},
		{"taken over after a crash", Job{Status: StatusRunning, StartedAt: at, Attempt: 1}, 3, nil, 2, 1},
		{"last crash resumed", Job{Status: StatusRunning, StartedAt: at, Attempt: 3, Crashes: 2}, 3, nil, 4, 3},
		{"one crash too many", Job{Status: StatusRunning, StartedAt: at, Attempt: 4, Crashes: 3}, 3, ErrCrashLoop, 4, 3},
		{"no crash resumed", Job{Status: StatusRunning, StartedAt: at, Attempt: 1}, 0, ErrCrashLoop, 1, 0},
		{"over", Job{Status: StatusSucceeded, Attempt: 1}, 3, ErrBadTransition, 1, 0},
		{"canceled while queued", Job{Status: StatusCanceled}, 3, ErrBadTransition, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := tt.job
			n, err := j.Start("worker-b/7", "task-b", tt.retries, now)
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Start = %d, %v; want error %v", n, err, tt.wantErr)
			}
			if j.Attempt != tt.wantAttempt || j.Crashes != tt.wantCrashes {
				t.Errorf("after Start: attempt %d, crashes %d; want %d, %d", j.Attempt, j.Crashes, tt.wantAttempt, tt.wantCrashes)
			}
			if err != nil {
				if j.Status != tt.job.Status || j.Holder != tt.job.Holder {
					t.Errorf("refused Start changed the job: %s held by %q", j.Status, j.Holder)
				}
				return
			}
			if n != j.Attempt || j.Status != StatusRunning || j.Holder != "worker-b/7" || j.CurrentTask() != "task-b" || j.StartedAt == nil {
				t.Errorf("Start = %d: job %s held by %q under %q, started %v; want attempt %d running, held by worker-b/7 under task-b",
					n, j.Status, j.Holder, j.CurrentTask(), j.StartedAt, j.Attempt)
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
