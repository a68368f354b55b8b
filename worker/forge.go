package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/benchq/benchq/internal/forge"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
	"github.com/benchq/benchq/internal/webhook"
)

// A job's notify (job.Notify) is delivered as its webhook is: the
// notifier records each status and comment as a delivery of the job and
// enqueues it on the webhooks queue, and the delivery server makes the
// attempts, retries them on the webhook schedule (a forge's Retry-After
// and rate limit reset lengthening a wait) and logs each one in the
// job's delivery log, where GET /v1/jobs/{id}/deliveries shows them and
// a redelivery sends one again.

// forgeStore is what forge deliveries need of the store beyond a
// webhook's; *store.Store implements it.
type forgeStore interface {
	Deliveries(ctx context.Context, id string) ([]store.DeliveryLog, error)
	GetTemplate(ctx context.Context, owner, name string) (*template.Template, error)
	LockForgeComment(ctx context.Context, target, holder string, ttl time.Duration) (bool, error)
	UnlockForgeComment(ctx context.Context, target, holder string) error
}

// maxForgeHold bounds how long a job's final status waits for its pending
// status to settle (see forgeOrder): past it, the final status is sent
// anyway, so a pending status whose task was lost holds nothing for good.
const maxForgeHold = 10 * time.Minute

// forgeHoldWait is how long a held delivery waits before it looks again.
const forgeHoldWait = time.Second

// errHeld: the delivery waits for another delivery of its job to settle
// first. Like errOwnerBusy, the task goes back to the queue for a while,
// a retry asynq does not count.
var errHeld = errors.New("worker: delivery held behind another of its job")

// heldError is errHeld with the task's wait.
type heldError struct {
	wait time.Duration
	msg  string
}

func (e *heldError) Error() string { return e.msg }
func (e *heldError) Unwrap() error { return errHeld }

// notifyForge records and enqueues what job j's notify sends on event.
func (n *WebhookNotifier) notifyForge(ctx context.Context, j *job.Job, event string) error {
	if j.Spec.Notify == nil {
		return nil
	}
	if n.cfg.Forge == nil {
		n.cfg.Logger.Warn("worker: job has a notify but this process sends none", "job", j.ID, "event", event)
		return nil
	}
	out, err := forge.Messages(j, event, n.cfg.LinkBase)
	if err != nil {
		return err
	}
	now := n.now().UTC()
	var errs []error
	for _, o := range out {
		body, err := json.Marshal(o.Message)
		if err != nil {
			errs = append(errs, fmt.Errorf("encode %s: %w", o.Name, err))
			continue
		}
		err = n.queue(ctx, j.Owner, &webhook.Delivery{
			JobID: j.ID, ID: webhook.MessageID(j.ID, o.Name), Event: o.Name, URL: n.cfg.Forge.Endpoint(o.Message),
			Status: webhook.StatusPending, MaxRetry: len(n.cfg.Schedule),
			CreatedAt: now, UpdatedAt: now, Payload: body,
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deliverForge makes one attempt at a forge delivery, with the token of
// the job's template or else the service's.
func (d *Deliverer) deliverForge(ctx context.Context, p queue.WebhookDeliverPayload, del *webhook.Delivery) error {
	var m forge.Message
	if err := json.Unmarshal(del.Payload, &m); err != nil || d.forge == nil {
		d.setStatus(ctx, del, webhook.StatusFailed)
		why := "this worker process sends nothing to forges"
		if err != nil {
			why = "unreadable message: " + err.Error()
		}
		return fmt.Errorf("worker: delivery %d of job %s: %s: %w", del.N, del.JobID, why, asynq.SkipRetry)
	}
	if done, err := d.forgeOrder(ctx, del, m); done || err != nil {
		return err
	}
	token, err := d.forgeToken(ctx, p.Owner, m)
	if err != nil { // Redis: worth another try, on the schedule
		if lastAttempt(ctx) {
			d.setStatus(ctx, del, webhook.StatusFailed)
		}
		return fmt.Errorf("worker: delivery %d of job %s: %w", del.N, del.JobID, err)
	}
	if m.Comment != nil {
		unlock, err := d.lockComment(ctx, del, m)
		if err != nil {
			return err
		}
		defer unlock()
	}
	return d.settle(ctx, del, d.forge.Send(ctx, m, token))
}

// lockComment takes the lock of m's comment for del's attempt, so that
// of two jobs of one request ending together one creates the comment and
// the other finds it; a delivery that finds it taken waits its turn (a
// wait that costs no retry). The lock outlives a stuck attempt by at most
// the task's timeout.
func (d *Deliverer) lockComment(ctx context.Context, del *webhook.Delivery, m forge.Message) (unlock func(), err error) {
	target := m.Forge + " " + m.Repository + "#" + strconv.Itoa(m.Request) + " " + m.Comment.Marker
	ok, err := d.st.LockForgeComment(ctx, target, del.ID, queue.WebhookDeliverTimeout)
	switch {
	case err != nil:
		return nil, fmt.Errorf("worker: delivery %d of job %s: %w", del.N, del.JobID, err)
	case !ok:
		return nil, &heldError{wait: forgeHoldWait,
			msg: fmt.Sprintf("worker: delivery %d of job %s: another job's delivery is writing the comment", del.N, del.JobID)}
	}
	return func() {
		ctx, cancel := detached(ctx)
		defer cancel()
		if err := d.st.UnlockForgeComment(ctx, target, del.ID); err != nil {
			d.log.Warn("worker: unlock forge comment", "job", del.JobID, "delivery", del.N, "err", err)
		}
	}, nil
}

// forgeOrder keeps a job's statuses in order on the forge, which shows
// the last one set: the final status waits (up to maxForgeHold) while the
// pending one is in flight, since the pending one's attempt may be on its
// way; and a pending status is never sent once the final one was tried
// (after that hold ran out), but superseded by it. done means the
// delivery was settled or sent back here; an error is for the task to
// return.
func (d *Deliverer) forgeOrder(ctx context.Context, del *webhook.Delivery, m forge.Message) (done bool, err error) {
	if m.Status == nil {
		return false, nil
	}
	pending := m.Status.State == forge.StatePending
	if !pending && time.Since(del.CreatedAt) > maxForgeHold {
		return false, nil
	}
	logs, err := d.st.Deliveries(ctx, del.JobID)
	if err != nil {
		return true, fmt.Errorf("worker: delivery %d of job %s: %w", del.N, del.JobID, err)
	}
	pendingName := job.ForgeStatusDelivery(m.Forge, string(forge.StatePending))
	for _, l := range logs {
		if l.N == del.N || !strings.HasPrefix(l.Event, m.Forge+".status.") {
			continue
		}
		switch {
		case pending && (len(l.Attempts) > 0 || !l.Status.InFlight()):
			d.setStatus(ctx, del, webhook.StatusSuperseded)
			d.log.Info("worker: pending status superseded by the final one", "job", del.JobID, "delivery", del.N, "final", l.N)
			return true, nil
		case !pending && l.Event == pendingName && l.Status.InFlight():
			return true, &heldError{wait: forgeHoldWait,
				msg: fmt.Sprintf("worker: delivery %d of job %s: waits for its pending status (delivery %d)", del.N, del.JobID, l.N)}
		}
	}
	return false, nil
}

// forgeToken is the token m is sent with: the api_token of the job's
// template (of the job's owner) when it keeps one, else the service's.
// "" when there is neither; Send then rejects the message saying so.
func (d *Deliverer) forgeToken(ctx context.Context, owner string, m forge.Message) (string, error) {
	if m.Template != "" {
		t, err := d.st.GetTemplate(ctx, owner, m.Template)
		switch {
		case err == nil:
			if tok := t.APIToken(m.Forge); tok != "" {
				return tok, nil
			}
		case !errors.Is(err, store.ErrNotFound): // a template deleted since: the service's token
			return "", fmt.Errorf("read the template's token: %w", err)
		}
	}
	return d.forgeTokens[m.Forge], nil
}
