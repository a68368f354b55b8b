package queue

import (
	"context"
	"fmt"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/store"
)

// Enqueuer puts tasks on the queue; *asynq.Client implements it. It is
// declared here, beside the tasks, once: the API, the webhook notifier,
// the janitor and the shard coordinator all enqueue through it.
type Enqueuer interface {
	EnqueueContext(ctx context.Context, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error)
}

// Enqueue puts task on q. An error that says Redis is unavailable wraps
// store.ErrUnavailable, as the store's own errors do: asynq keeps the
// chain of some Redis errors but flattens a script's into text ("redis
// eval error: OOM command not allowed..."), which store.ClassifyText reads.
func Enqueue(ctx context.Context, q Enqueuer, task *asynq.Task, opts ...asynq.Option) (*asynq.TaskInfo, error) {
	info, err := q.EnqueueContext(ctx, task, opts...)
	if err != nil {
		return nil, fmt.Errorf("queue: enqueue %s: %w", task.Type(), store.ClassifyText(err))
	}
	return info, nil
}
