package webhook

import (
	"encoding/json"
	"time"
)

// Status is where a delivery stands.
type Status string

const (
	// StatusPending: enqueued (or redelivered), no attempt answered yet.
	StatusPending Status = "pending"
	// StatusRetrying: an attempt failed; another is scheduled.
	StatusRetrying Status = "retrying"
	// StatusDelivered: the receiver answered 2xx.
	StatusDelivered Status = "delivered"
	// StatusGone: the receiver answered 410; no retry follows.
	StatusGone Status = "gone"
	// StatusFailed: every attempt of the schedule failed (or one was
	// rejected); asynq archived the task.
	StatusFailed Status = "failed"
	// StatusSuperseded: a forge's pending status not sent because its job
	// had ended by the time it could be: the final status replaces it.
	StatusSuperseded Status = "superseded"
)

// InFlight reports whether a task for the delivery is still queued or
// retrying, so a redelivery would race it.
func (s Status) InFlight() bool { return s == StatusPending || s == StatusRetrying }

// Delivery is one webhook message of one job: an event, sent with the same
// webhook-id and body on every attempt and every redelivery. A job has at
// most one delivery per event.
type Delivery struct {
	JobID string `json:"job_id"`
	// N numbers the job's deliveries from 1, in creation order. The store
	// keeps it as the record's position, not in the record.
	N     int    `json:"n,omitempty"`
	ID    string `json:"id"` // webhook-id, MessageID(job, event)
	Event string `json:"event"`
	URL   string `json:"url"`
	// Status is updated after every attempt.
	Status Status `json:"status"`
	// MaxRetry is the schedule's length when the delivery was created; a
	// redelivery gets the same number of retries.
	MaxRetry     int             `json:"max_retry"`
	Redeliveries int             `json:"redeliveries"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	Payload      json.RawMessage `json:"payload"`
}

// Attempt is one try at a delivery, as logged.
type Attempt struct {
	// N numbers the delivery's attempts from 1, redeliveries included.
	// The store keeps it as the record's position, not in the record.
	N          int       `json:"n,omitempty"`
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty"` // 0 when no answer came
	Error      string    `json:"error,omitempty"`
	DurationMs float64   `json:"duration_ms"`
	// Response is the first MaxLoggedBody bytes of the answer's body.
	Response string `json:"response,omitempty"`
	// Outcome is how the attempt was judged.
	Outcome Outcome `json:"outcome"`
	// RetryAfterMs is the wait the receiver asked for (429/503), if any.
	RetryAfterMs int64 `json:"retry_after_ms,omitempty"`
}
