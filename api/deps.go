package api

import (
	"context"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// JobStore is the persistence the API needs; *store.Store implements it.
type JobStore interface {
	CreateJob(ctx context.Context, j *job.Job) error
	GetJob(ctx context.Context, id string) (*job.Job, error)
	ListJobs(ctx context.Context, f store.ListFilter) ([]*job.Job, string, error)
	UpdateJob(ctx context.Context, id string, fn func(*job.Job) error) (*job.Job, error)
	AppendEvent(ctx context.Context, jobID string, typ string, data any) error // jobend: job.finished
	ReleaseTargets(ctx context.Context, id string, hosts []string) error       // jobend: a canceled job's target queue places
	Runs(ctx context.Context, id string) ([]job.Run, error)
	ReadEvents(ctx context.Context, jobID, after string, block time.Duration) ([]store.Event, error)
	CountByStatus(ctx context.Context) (map[job.Status]int64, error)
	// ProbeWrite is the readiness probe: Redis accepts a write.
	ProbeWrite(ctx context.Context) error
	// DiscardJob undoes a creation that failed before the job was
	// accepted: the job if still queued, its index entries, its secret
	// and its slot.
	DiscardJob(ctx context.Context, j *job.Job) error
}
