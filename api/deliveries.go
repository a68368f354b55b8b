package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/undo"
	"github.com/benchq/benchq/internal/webhook"
)

// DeliveryStore is the webhook persistence the API needs; *store.Store
// implements it.
type DeliveryStore interface {
	SetWebhookSecret(ctx context.Context, id, secret string) error
	Deliveries(ctx context.Context, id string) ([]store.DeliveryLog, error)
	UpdateDelivery(ctx context.Context, id string, n int, fn func(*webhook.Delivery) error) (*webhook.Delivery, error)
}

// CreateJobResponse is the answer to POST /v1/jobs: the job, and the
// webhook signing secret when one was generated for it. The secret is
// shown this once and never again.
type CreateJobResponse struct {
	JobResponse
	// WebhookSecret ("whsec_...") signs the job's webhooks; absent when the
	// job has no webhook or the API key has its own secret.
	WebhookSecret string `json:"webhook_secret,omitempty" example:"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"`
}

// DeliveriesResponse lists a job's webhook deliveries.
type DeliveriesResponse struct {
	Deliveries []DeliveryResponse `json:"deliveries"`
}

// DeliveryResponse is one webhook message of a job and its attempts.
type DeliveryResponse struct {
	N         int    `json:"n" example:"1"`
	WebhookID string `json:"webhook_id" example:"msg_01JC3W9Q5V1ZK2M4N6P8R0T2V4_job.succeeded"`
	Event     string `json:"event" example:"job.succeeded"`
	URL       string `json:"url" example:"http://127.0.0.1:9000/hooks/benchq"`
	// Status: pending (queued), retrying, delivered, gone (the receiver
	// answered 410), failed (every attempt of the schedule failed, or a
	// forge rejected it) or superseded (a forge's pending status the
	// job's end overtook).
	Status       webhook.Status    `json:"status" swaggertype:"string" enums:"pending,retrying,delivered,gone,failed,superseded" example:"delivered"`
	MaxRetries   int               `json:"max_retries" example:"9"`
	Redeliveries int               `json:"redeliveries"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
	Payload      json.RawMessage   `json:"payload" swaggertype:"object"`
	Attempts     []AttemptResponse `json:"attempts"`
}

// AttemptResponse is one logged attempt at a delivery.
type AttemptResponse struct {
	N          int       `json:"n" example:"1"`
	At         time.Time `json:"at"`
	StatusCode int       `json:"status_code,omitempty" example:"500"`
	Error      string    `json:"error,omitempty" example:"timeout: context deadline exceeded"`
	DurationMs float64   `json:"duration_ms" example:"12.5"`
	// Response is the first 1 KiB of the answer's body.
	Response     string          `json:"response,omitempty"`
	Outcome      webhook.Outcome `json:"outcome" swaggertype:"string" enums:"delivered,retry,gone,rejected" example:"retry"`
	RetryAfterMs int64           `json:"retry_after_ms,omitempty"`
}

func newDeliveryResponse(d webhook.Delivery, attempts []webhook.Attempt) DeliveryResponse {
	r := DeliveryResponse{
		N: d.N, WebhookID: d.ID, Event: d.Event, URL: job.RedactURL(d.URL), Status: d.Status,
		MaxRetries: d.MaxRetry, Redeliveries: d.Redeliveries,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt, Payload: d.Payload,
		Attempts: make([]AttemptResponse, 0, len(attempts)),
	}
	for _, a := range attempts {
		r.Attempts = append(r.Attempts, AttemptResponse{
			N: a.N, At: a.At, StatusCode: a.StatusCode, Error: a.Error, DurationMs: a.DurationMs,
			Response: a.Response, Outcome: a.Outcome, RetryAfterMs: a.RetryAfterMs,
		})
	}
	return r
}

// handleListDeliveries shows a job's webhook deliveries.
//
//	@Summary		List a job's webhook deliveries
//	@Description	Every webhook message of the job (one per event), in order, each with its webhook-id, status, payload and every attempt: time, HTTP status or error, duration and the first 1 KiB of the answer. A job's notify adds its forge deliveries to the list: github.status.pending, github.status.success (failure, error) and github.comment (gitlab the same), whose URL is the forge's API and whose payload is the status or comment sent.
//	@Tags			jobs
//	@Produce		json
//	@Param			id	path		string	true	"job id"
//	@Success		200	{object}	DeliveriesResponse
//	@Failure		404	{object}	Problem
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable (reads are served while it refuses writes); retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id}/deliveries [get]
func (s *Server) handleListDeliveries(c echo.Context) error {
	id := c.Param("id")
	if _, err := s.ownedJob(c, id); err != nil {
		return err
	}
	if s.deliveries == nil {
		return errcode.New(errcode.Unavailable, "webhooks are not configured on this server")
	}
	logs, err := s.deliveries.Deliveries(c.Request().Context(), id)
	if err != nil {
		return fmt.Errorf("api: list deliveries: %w", err)
	}
	resp := DeliveriesResponse{Deliveries: make([]DeliveryResponse, 0, len(logs))}
	for _, l := range logs {
		resp.Deliveries = append(resp.Deliveries, newDeliveryResponse(l.Delivery, l.Attempts))
	}
	return c.JSON(http.StatusOK, resp)
}

// handleRedeliver sends a delivery again.
//
//	@Summary		Redeliver a webhook
//	@Description	Enqueues delivery n again with the same webhook-id and body (receivers de-duplicate on the id) and a fresh retry schedule. Refused with 409 while the delivery is still pending or retrying.
//	@Tags			jobs
//	@Produce		json
//	@Param			id	path		string	true	"job id"
//	@Param			n	path		int		true	"delivery number, from 1"
//	@Success		202	{object}	DeliveryResponse	"redelivery enqueued"
//	@Failure		404	{object}	Problem
//	@Failure		409	{object}	Problem	"the delivery is still in flight"
//	@Failure		401	{object}	Problem	"missing, invalid or revoked API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes (Retry-After header); the delivery is left as it was"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/jobs/{id}/deliveries/{n}/redeliver [post]
func (s *Server) handleRedeliver(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	j, err := s.ownedJob(c, id)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 1 {
		return fmt.Errorf("api: delivery %q: %w", c.Param("n"), store.ErrNotFound)
	}
	if s.deliveries == nil {
		return errcode.New(errcode.Unavailable, "webhooks are not configured on this server")
	}
	var before webhook.Status
	d, err := s.deliveries.UpdateDelivery(ctx, id, n, func(d *webhook.Delivery) error {
		if d.Status.InFlight() {
			return errcode.Newf(errcode.DeliveryInFlight, "delivery %d is %s", d.N, d.Status)
		}
		before = d.Status
		d.Status, d.UpdatedAt = webhook.StatusPending, time.Now().UTC()
		d.Redeliveries++
		return nil
	})
	if err != nil {
		return fmt.Errorf("api: redeliver: %w", err)
	}
	task, err := queue.NewWebhookDeliverTask(id, j.Owner, n, d.Redeliveries, d.MaxRetry)
	if err == nil {
		_, err = queue.Enqueue(ctx, s.queue, task)
	}
	if err != nil {
		// Pending with no task would refuse every later redelivery (409):
		// put the delivery back as it was, if it still is as we left it.
		redeliveries := d.Redeliveries
		s.undo.Run(fmt.Sprintf("redelivery %d of job %s", n, id), undo.RetryFor, func(ctx context.Context) error {
			_, err := s.deliveries.UpdateDelivery(ctx, id, n, func(d *webhook.Delivery) error {
				if d.Status == webhook.StatusPending && d.Redeliveries == redeliveries {
					d.Status = before
					d.Redeliveries--
				}
				return nil
			})
			return err
		})
		return fmt.Errorf("api: enqueue redelivery %d of job %s: %w", n, id, err)
	}
	return c.JSON(http.StatusAccepted, newDeliveryResponse(*d, nil))
}
