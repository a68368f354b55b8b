package api

import (
	"context"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// JobStore is the persistence the API needs; *store.Store implements it.
type JobStore interface {
	CreateJob(ctx context.Context, j *job.Job) error
	GetJob(ctx context.Context, id string) (*job.Job, error)
	ListJobs(ctx context.Context, f store.ListFilter) ([]*job.Job, string, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	RequestCancel(ctx context.Context, id string) (*job.Job, error)
	Runs(ctx context.Context, id string) ([]job.Run, error)
	ReadEvents(ctx context.Context, jobID, after string, block time.Duration) ([]store.Event, error)
	CountByStatus(ctx context.Context) (map[job.Status]int64, error)
	Ping(ctx context.Context) error
}

// Enqueuer puts tasks on the queue; *asynq.Client implements it.
type Enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}
