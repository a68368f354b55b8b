package job

import (
	"encoding/json"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/monitor"
)

// Status is a job's place in its lifecycle.
type Status string

const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusSucceeded Status = "succeeded"
	StatusFailed    Status = "failed"
	StatusCanceled  Status = "canceled"
)

// Terminal reports whether no further transition can happen.
func (s Status) Terminal() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCanceled
}

// Job is a submitted spec and everything known about its execution.
type Job struct {
	ID         string     `json:"id"`
	Owner      string     `json:"-"` // API key id; empty in open dev mode
	Spec       Spec       `json:"spec"`
	Status     Status     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	Progress   Progress   `json:"progress"`
	Verdict    string     `json:"verdict,omitempty"` // pass | fail | none
	Error      string     `json:"error,omitempty"`   // why the job failed
	// Analysis is the analysis of the runs as the job ended (Finish), kept
	// so that what a finished job says does not change when its compare_to
	// job expires; nil while the job runs.
	Analysis        *Analysis `json:"analysis,omitempty"`
	CancelRequested bool      `json:"cancel_requested,omitempty"`
	// Pinned keeps the job past the retention (store.PinJob).
	Pinned bool `json:"pinned,omitempty"`
	// QueuedReason says why a queued job that a worker picked up has not
	// started: which target host it waits for, and for which job when
	// that job has the same owner (another tenant's ids are not shown).
	// It is cleared when the job leaves queued.
	QueuedReason string `json:"queued_reason,omitempty"`

	// Who runs the job (see Start): worker state, not shown by the API.
	// Attempt numbers the job's starts and is the fencing token of the
	// attempt holding it; Holder names that attempt's worker and Task its
	// asynq task ("" for the job's own, whose ID is the job's); Crashes
	// counts the attempts that died holding it, StalledCrashes the last of
	// those in a row with no run stored between them, and RunsAtCrash the
	// runs stored at the last death (CrashBudget).
	Attempt        int    `json:"attempt,omitempty"`
	Holder         string `json:"holder,omitempty"`
	Task           string `json:"task,omitempty"`
	Crashes        int    `json:"crashes,omitempty"`
	StalledCrashes int    `json:"stalled_crashes,omitempty"`
	RunsAtCrash    int    `json:"runs_at_crash,omitempty"`
}

// Progress is what a client polling the job sees while it runs, and what
// was done once it ended.
type Progress struct {
	RunsTotal int `json:"runs_total"`
	// RunsDone is the number of runs stored: the store counts them when it
	// reads the job, whatever a worker last wrote.
	RunsDone int `json:"runs_done"`
	// RequestsDone counts the current run's requests while the job runs;
	// once it ended, the complete requests of all its stored runs.
	RequestsDone int64   `json:"requests_done"`
	CurrentRPS   float64 `json:"current_rps"`
	CurrentRun   *RunKey `json:"current_run,omitempty"`
}

// Point is one cell of the sweep: a target at one concurrency with one
// request count, duration or rate.
type Point struct {
	Index       int      `json:"index"`
	Target      string   `json:"target"` // target name
	TargetIndex int      `json:"target_index"`
	Concurrency int      `json:"concurrency"`
	Requests    int      `json:"requests,omitempty"`
	Duration    Duration `json:"duration,omitempty"`
	Rate        float64  `json:"rate,omitempty"`
	// RateTo is, for a rate ramp ("rate": ["100:5000"]), the rate the run
	// ends at, Rate being where it starts; zero for a fixed rate.
	RateTo float64 `json:"rate_to,omitempty"`
}

// RunKey names one repeat of one point; it is unique within a job and is
// how a retried worker knows which runs are already stored.
type RunKey struct {
	Point  int `json:"point"`
	Repeat int `json:"repeat"`
}

// Run is one executed repeat of a point with its ab-compatible result.
type Run struct {
	RunKey
	Target      string           `json:"target"`
	Concurrency int              `json:"concurrency"`
	StartedAt   time.Time        `json:"started_at"`
	FinishedAt  time.Time        `json:"finished_at"`
	Result      *abreport.Report `json:"result"`
	// Shards lists the worker processes a sharded run (sweep.shards > 1)
	// ran on, in shard order; Result is their merged measurement.
	Shards []ShardRun `json:"shards,omitempty"`
	// Partial is set on the run a cancel stopped part way: Result holds
	// what it measured until then, as ab reports what it measured when
	// stopped with Ctrl-C. The analysis leaves it out, since its counts
	// cover less than the point asked for.
	Partial bool `json:"partial,omitempty"`
	// Aborted is set on a run that a threshold marked "abort" ended
	// before its end, once the threshold was certainly broken: AbortedBy
	// is that threshold as the spec wrote it, AbortReason what the run had
	// measured ("failed_ratio 0.5 >= 0.01 after 200 requests ..."). Result
	// holds what the run measured until then; the verdict fails the
	// threshold on it.
	Aborted     bool   `json:"aborted,omitempty"`
	AbortedBy   string `json:"aborted_by,omitempty" example:"failed_ratio < 0.01"`
	AbortReason string `json:"abort_reason,omitempty" example:"failed_ratio 0.5 >= 0.01 after 200 requests (99.9 % lower bound 0.4)"`
	// Measurement is the run's measurement as measure.EncodeMeasurement
	// wrote it: every phase with its sums and histogram, what Result
	// summarises, so runs merge exactly (MergeShards). It stays in the
	// store: API responses and reports leave it out, as it is large and
	// Result says the same to a reader. Runs stored before it existed have
	// none (Run.DecodeMeasurement says ErrNoMeasurement).
	Measurement json.RawMessage `json:"measurement,omitempty" swaggerignore:"true"`
	// Server is what the target's monitor endpoint said of the server
	// during the run; nil for a target without one.
	Server *monitor.Server `json:"server,omitempty"`
	// Testbed is what the run was measured on; nil for runs stored before
	// it was recorded, and for a sharded run whose shards ran on
	// different testbeds.
	Testbed *Testbed `json:"testbed,omitempty"`
}
