package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Task types, as domain:verb.
const (
	TypeJobRun         = "job:run"
	TypeJobShard       = "job:shard"
	TypeWebhookDeliver = "webhook:deliver"
)

// Queues. Benchmarks and webhook deliveries are served by separate asynq
// servers: a worker runs one benchmark at a time, while deliveries are many
// and short.
const (
	QueueJobs     = "jobs"
	QueueShards   = "shards" // served by the jobs' server, before QueueJobs
	QueueWebhooks = "webhooks"
)

// Options of a job:run task.
const (
	// MaxRetry bounds the attempts of a job whose worker keeps dying or
	// handing it back. Each attempt resumes after the runs already stored.
	MaxRetry = 25
	// Retention keeps a finished task in Redis for a day. asynq refuses to
	// enqueue a task whose TaskID still exists (pending, active, retrying,
	// or completed and retained), so while it lives a second enqueue of the
	// same job (a retried POST, a double submit) fails with
	// asynq.ErrTaskIDConflict instead of running the job twice. The
	// pitfall: within that day the same job ID can never be enqueued
	// again, so a job that must run again needs a new ID.
	Retention = 24 * time.Hour
	// timeoutMargin and timeoutFactor turn a sweep's estimate into the
	// task's timeout. asynq's default of 30 minutes would cancel a long
	// sweep and retry it forever; the estimate is already an upper bound,
	// the margin absorbs a slow start and the store's writes.
	timeoutFactor = 1.5
	timeoutMargin = 5 * time.Minute
)

// ErrBadPayload is returned by ParseJobRun for a task that can never be
// handled; the worker wraps it in asynq.SkipRetry.
var ErrBadPayload = errors.New("queue: bad task payload")

// JobRunPayload is the body of a job:run task.
type JobRunPayload struct {
	JobID string `json:"job_id"`
}

// NewJobRunTask builds the task that runs job jobID, whose sweep is
// expected to take at most estimate (job.Spec.Estimate). TaskID is the job
// ID, so the queue holds at most one task per job.
func NewJobRunTask(jobID string, estimate time.Duration) (*asynq.Task, error) {
	return newJobRunTask(jobID, jobID, estimate)
}

// NewJobResumeTask builds the task that resumes job jobID after the
// attempt numbered attempt died holding it. The dead attempt's own task
// stays active in asynq until asynq's lease on it runs out (a minute or
// more), so the resume needs a task of its own; its TaskID names the dead
// attempt, so of several workers noticing one death only one enqueues.
func NewJobResumeTask(jobID string, attempt int, estimate time.Duration) (*asynq.Task, error) {
	return newJobRunTask(jobID, fmt.Sprintf("%s:resume:%d", jobID, attempt), estimate)
}

func newJobRunTask(jobID, taskID string, estimate time.Duration) (*asynq.Task, error) {
	if jobID == "" {
		return nil, fmt.Errorf("%w: empty job id", ErrBadPayload)
	}
	payload, err := json.Marshal(JobRunPayload{JobID: jobID})
	if err != nil {
		return nil, fmt.Errorf("queue: encode job:run payload: %w", err)
	}
	return asynq.NewTask(TypeJobRun, payload,
		asynq.TaskID(taskID),
		asynq.Queue(QueueJobs),
		asynq.Timeout(JobRunTimeout(estimate)),
		asynq.MaxRetry(MaxRetry),
		asynq.Retention(Retention),
	), nil
}

// JobRunTimeout is the asynq timeout for a sweep estimated at estimate:
// estimate × 1.5 + 5 minutes.
func JobRunTimeout(estimate time.Duration) time.Duration {
	estimate = max(estimate, 0)
	const maxTimeout = time.Duration(1<<63 - 1)
	if float64(estimate) > float64(maxTimeout-timeoutMargin)/timeoutFactor {
		return maxTimeout
	}
	return time.Duration(float64(estimate)*timeoutFactor) + timeoutMargin
}

// ParseJobRun reads a job:run task's payload strictly; any error wraps
// ErrBadPayload.
func ParseJobRun(t *asynq.Task) (JobRunPayload, error) {
	if t.Type() != TypeJobRun {
		return JobRunPayload{}, fmt.Errorf("%w: type %q, want %q", ErrBadPayload, t.Type(), TypeJobRun)
	}
	var p JobRunPayload
	dec := json.NewDecoder(bytes.NewReader(t.Payload()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return JobRunPayload{}, fmt.Errorf("%w: %w", ErrBadPayload, err)
	}
	if p.JobID == "" {
		return JobRunPayload{}, fmt.Errorf("%w: empty job_id", ErrBadPayload)
	}
	return p, nil
}

// ShardPayload is the body of a job:shard task: shard Shard of Shards of
// the run (Point, Repeat) of job JobID, in the coordination round Round
// (store.ShardRound), which names one try at the run.
type ShardPayload struct {
	JobID  string `json:"job_id"`
	Point  int    `json:"point"`
	Repeat int    `json:"repeat"`
	Round  string `json:"round"`
	Shard  int    `json:"shard"`
	Shards int    `json:"shards"`
}

// NewShardTask builds the task that runs one shard of a sharded run on
// another worker process, within timeout. It is on QueueShards, which
// workers serve before QueueJobs, so a free worker joins a run that is
// waiting for it before it starts a job of its own. It is never retried:
// a shard whose worker died is not resumed, its run is tried again as a
// whole in a new round with new tasks. TaskID names the round and the
// shard, so a round enqueues each shard once.
func NewShardTask(p ShardPayload, timeout time.Duration) (*asynq.Task, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	payload, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("queue: encode job:shard payload: %w", err)
	}
	return asynq.NewTask(TypeJobShard, payload,
		asynq.TaskID(p.TaskID()),
		asynq.Queue(QueueShards),
		asynq.Timeout(timeout),
		asynq.MaxRetry(0),
		asynq.Retention(time.Hour),
	), nil
}

// TaskID is the asynq TaskID of the shard's task: one per shard of a round.
func (p ShardPayload) TaskID() string {
	return fmt.Sprintf("%s:shard:%s:%d", p.JobID, p.Round, p.Shard)
}

// ParseShard reads a job:shard task's payload strictly; any error wraps
// ErrBadPayload.
func ParseShard(t *asynq.Task) (ShardPayload, error) {
	if t.Type() != TypeJobShard {
		return ShardPayload{}, fmt.Errorf("%w: type %q, want %q", ErrBadPayload, t.Type(), TypeJobShard)
	}
	var p ShardPayload
	dec := json.NewDecoder(bytes.NewReader(t.Payload()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return ShardPayload{}, fmt.Errorf("%w: %w", ErrBadPayload, err)
	}
	return p, p.check()
}

func (p ShardPayload) check() error {
	switch {
	case p.JobID == "" || p.Round == "":
		return fmt.Errorf("%w: empty job_id or round", ErrBadPayload)
	case p.Shards < 2 || p.Shard < 1 || p.Shard >= p.Shards:
		// Shard 0 is the coordinator's own and never a task.
		return fmt.Errorf("%w: shard %d of %d", ErrBadPayload, p.Shard, p.Shards)
	case p.Point < 0 || p.Repeat < 0:
		return fmt.Errorf("%w: run %d/%d", ErrBadPayload, p.Point, p.Repeat)
	}
	return nil
}
