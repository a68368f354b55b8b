package queue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// WebhookDeliverTimeout bounds one delivery attempt as asynq sees it: the
// HTTP attempt's own timeout (10 s) plus the store writes around it.
const WebhookDeliverTimeout = 30 * time.Second

// WebhookDeliverPayload is the body of a webhook:deliver task: which
// delivery of which job, and the job's owner (its API key id, "" in open
// mode), whose share of the delivery server the attempt takes. The
// message itself (id, body, URL) is in the store, so every attempt and
// redelivery sends the same bytes.
type WebhookDeliverPayload struct {
	JobID    string `json:"job_id"`
	Delivery int    `json:"delivery"`
	Owner    string `json:"owner,omitempty"`
}

// NewWebhookDeliverTask builds the task that delivers delivery n of job
// jobID, owned by owner, retried up to maxRetry times. round is the delivery's redelivery
// count: the TaskID names delivery and round, so enqueueing the same round
// again while its task is queued, retrying or running fails with
// asynq.ErrTaskIDConflict instead of sending the message twice, while a
// redelivery (the next round) is a new task. No Retention is set, so a
// completed task frees its ID at once.
func NewWebhookDeliverTask(jobID, owner string, n, round, maxRetry int) (*asynq.Task, error) {
	if jobID == "" || n < 1 || round < 0 {
		return nil, fmt.Errorf("%w: job %q delivery %d round %d", ErrBadPayload, jobID, n, round)
	}
	payload, err := json.Marshal(WebhookDeliverPayload{JobID: jobID, Delivery: n, Owner: owner})
	if err != nil {
		return nil, fmt.Errorf("queue: encode webhook:deliver payload: %w", err)
	}
	return asynq.NewTask(TypeWebhookDeliver, payload,
		asynq.TaskID(WebhookDeliverTaskID(jobID, n, round)),
		asynq.Queue(QueueWebhooks),
		asynq.MaxRetry(max(maxRetry, 0)),
		asynq.Timeout(WebhookDeliverTimeout),
	), nil
}

// WebhookDeliverTaskID is the asynq TaskID of round round of delivery n
// of job jobID.
func WebhookDeliverTaskID(jobID string, n, round int) string {
	return fmt.Sprintf("%s:%s:%d:%d", TypeWebhookDeliver, jobID, n, round)
}

// ParseWebhookDeliver reads a webhook:deliver task's payload strictly; any
// error wraps ErrBadPayload.
func ParseWebhookDeliver(t *asynq.Task) (WebhookDeliverPayload, error) {
	if t.Type() != TypeWebhookDeliver {
		return WebhookDeliverPayload{}, fmt.Errorf("%w: type %q, want %q", ErrBadPayload, t.Type(), TypeWebhookDeliver)
	}
	var p WebhookDeliverPayload
	dec := json.NewDecoder(bytes.NewReader(t.Payload()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return WebhookDeliverPayload{}, fmt.Errorf("%w: %w", ErrBadPayload, err)
	}
	if p.JobID == "" || p.Delivery < 1 {
		return WebhookDeliverPayload{}, fmt.Errorf("%w: job %q delivery %d", ErrBadPayload, p.JobID, p.Delivery)
	}
	return p, nil
}
