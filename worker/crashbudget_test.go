package worker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/testservers"
	"github.com/benchq/benchq/worker"
)

// storeRun stores repeat k of point 0 of job id as a finished attempt
// would: progress made before the next death.
func (e *env) storeRun(t *testing.T, id string, k int) {
	t.Helper()
	now := time.Now().UTC()
	r := &job.Run{RunKey: job.RunKey{Point: 0, Repeat: k}, Target: "a", Concurrency: 1,
		StartedAt: now.Add(-time.Second), FinishedAt: now,
		Result: &abreport.Report{CompleteRequests: 10, ConcurrencyLevel: 1, StatusCodes: map[int]int64{200: 10}}}
	if saved, err := e.st.SaveRun(t.Context(), id, r); !saved || err != nil {
		t.Fatalf("SaveRun(repeat %d) = %v, %v", k, saved, err)
	}
}

// TestCrashBudgetCountsDeathsWithoutProgress: a job whose workers die
// again and again is resumed as long as runs get stored between deaths,
// up to the limit of deaths in all; deaths in a row with nothing stored
// between them fail it after CrashRetries, saying why. The last death of
// each case is the one the worker's janitor finds and resumes.
func TestCrashBudgetCountsDeathsWithoutProgress(t *testing.T) {
	tests := []struct {
		name     string
		deaths   int  // the attempts that die holding the job
		progress bool // a run is stored before each death
		limit    int  // Config.CrashLimit
		want     job.Status
		why      string
	}{
		{"runs stored between deaths", 5, true, 0, job.StatusSucceeded, ""},
		{"nothing stored between deaths", 4, false, 0, job.StatusFailed,
			"died 4 times in a row with no run stored in between"},
		{"runs stored, too many deaths in all", 6, true, 5, job.StatusFailed,
			"died 6 times (attempt 6 last), and a job is resumed after at most 5 deaths in all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			tg := testservers.StartTarget(t, "hello benchq", 0)
			j, _ := e.create(t, closedSpec([]int{1}, []int{10}, tt.deaths+1, tg))
			budget := job.CrashBudget{Stalled: worker.DefaultCrashRetries, Total: worker.DefaultCrashLimit}
			if _, err := e.st.UpdateJob(t.Context(), j.ID, func(j *job.Job) error {
				_, err := j.Start("dead/1", "", budget, time.Now().UTC())
				return err
			}); err != nil {
				t.Fatal(err)
			}
			for k := range tt.deaths {
				if tt.progress {
					e.storeRun(t, j.ID, k)
				}
				if k < tt.deaths-1 { // the last death is left for the janitor
					e.takeOver(t, j.ID, fmt.Sprintf("dead/%d", k+2), "")
				}
			}
			if err := e.rdb.Del(t.Context(), "benchq:job:{"+j.ID+"}:lease").Err(); err != nil {
				t.Fatal(err)
			}
			e.startWorkerWith(t, worker.Config{JobLease: time.Second, CrashLimit: tt.limit})
			got := e.waitJob(t, j.ID, 15*time.Second, "a terminal status", terminal)
			if got.Status != tt.want || !strings.Contains(got.Error, tt.why) {
				t.Fatalf("job %s (%q) after %d deaths, want %s saying %q", got.Status, got.Error, got.Crashes, tt.want, tt.why)
			}
			stored := 0
			if tt.progress {
				stored = tt.deaths
			}
			switch tt.want {
			case job.StatusSucceeded:
				if got.Crashes != tt.deaths || got.Progress.RunsDone != tt.deaths+1 || tg.Hits() != 10 {
					t.Errorf("crashes %d, runs done %d, %d requests; want %d crashes, all %d runs, 10 requests (the one run left)",
						got.Crashes, got.Progress.RunsDone, tg.Hits(), tt.deaths, tt.deaths+1)
				}
			case job.StatusFailed:
				if got.Progress.RunsDone != stored || tg.Hits() != 0 {
					t.Errorf("runs done %d, %d requests; want the %d stored and no load", got.Progress.RunsDone, tg.Hits(), stored)
				}
			}
		})
	}
}
