package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/forge"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/jobend"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/webhook"
)

// Timings of the webhook server.
const (
	// DefaultWebhookConcurrency: deliveries are short and mostly wait on
	// the network, so many run at once.
	DefaultWebhookConcurrency = 10
	// webhookShareDivisor: zero WebhookConfig.PerOwner gives one owner a
	// quarter of the slots, so it takes at least four tenants whose
	// receivers hang to fill the server.
	webhookShareDivisor = 4
	// Bounds of how often the delivery server polls its queue and moves
	// due retries back to it: half the schedule's shortest wait, so a
	// short test schedule is kept. Each poll is a Lua script, which the
	// all-in-one's embedded Redis interprets at about 0.4 ms of the load
	// generator's core: with the default schedule the server polls once a
	// second, and a webhook arrives up to 1.5 s after its job ends.
	minDelayedCheck = 20 * time.Millisecond
	maxDelayedCheck = time.Second
)

// Notifier is told when a job starts running and when it ends;
// WebhookNotifier enqueues the job's webhooks. An error never changes the
// job's outcome; for an end event the runner has the task retried, and the
// retry finds the job over and tells the notifier again (which sends each
// event once), so a Redis blip does not lose the webhook.
type Notifier interface {
	Notify(ctx context.Context, j *job.Job, event string) error
}

// notify tells the runner's notifier, if it has one.
func (r *Runner) notify(ctx context.Context, j *job.Job, event string) error {
	if r.notifier == nil || j == nil {
		return nil
	}
	return r.notifier.Notify(ctx, j, event)
}

// notifyStore is what WebhookNotifier needs; *store.Store implements it.
type notifyStore interface {
	jobend.BaselineSource // Runs, and GetJob for the compare_to job
	CreateDelivery(ctx context.Context, d *webhook.Delivery) (created bool, err error)
	UpdateDelivery(ctx context.Context, id string, n int, fn func(*webhook.Delivery) error) (*webhook.Delivery, error)
}

// NotifierConfig configures a WebhookNotifier.
type NotifierConfig struct {
	// Schedule sets each delivery's retries (its length); nil means
	// webhook.DefaultSchedule().
	Schedule webhook.Schedule
	// LinkBase prefixes the links in payloads ("http://benchq:8080"); empty
	// leaves them relative (and forge statuses without a link).
	LinkBase string
	// Forge names where a job's notify deliveries go (their URL in the
	// log); nil makes none.
	Forge *forge.Client
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

// WebhookNotifier records a delivery for each event a job's webhook
// subscribes to, and for each status and comment its notify sends to a
// forge (forge.go), and enqueues it on the webhooks queue. A job has one
// delivery per event (or forge message), whatever the number of calls: the runner notifies
// again whenever a retried attempt finds the job already over, so an event
// whose notify was lost to a crash is sent then, and one already sent is
// not sent twice.
type WebhookNotifier struct {
	st  notifyStore
	q   queue.Enqueuer
	cfg NotifierConfig
	now func() time.Time
}

// NewWebhookNotifier returns a notifier writing to st and enqueueing on q.
func NewWebhookNotifier(st *store.Store, q queue.Enqueuer, cfg NotifierConfig) *WebhookNotifier {
	return newWebhookNotifier(st, q, cfg)
}

func newWebhookNotifier(st notifyStore, q queue.Enqueuer, cfg NotifierConfig) *WebhookNotifier {
	if cfg.Schedule == nil {
		cfg.Schedule = webhook.DefaultSchedule()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &WebhookNotifier{st: st, q: q, cfg: cfg, now: time.Now}
}

// Notify enqueues event for job j if its webhook lists it, and what its
// notify sends to a forge on event. Failures are logged and returned, for
// the runner to retry an end event.
func (n *WebhookNotifier) Notify(ctx context.Context, j *job.Job, event string) error {
	var errs []error
	if webhook.Subscribed(j, event) {
		if err := n.notify(ctx, j, event); err != nil {
			n.cfg.Logger.Error("worker: enqueue webhook", "job", j.ID, "event", event, "err", err)
			errs = append(errs, fmt.Errorf("worker: enqueue %s webhook of job %s: %w", event, j.ID, err))
		}
	}
	if err := n.notifyForge(ctx, j, event); err != nil { // forge.go
		n.cfg.Logger.Error("worker: enqueue forge deliveries", "job", j.ID, "event", event, "err", err)
		errs = append(errs, fmt.Errorf("worker: enqueue %s forge deliveries of job %s: %w", event, j.ID, err))
	}
	return errors.Join(errs...)
}

func (n *WebhookNotifier) notify(ctx context.Context, j *job.Job, event string) error {
	var a *job.Analysis
	switch {
	case event == job.EventStarted:
	case j.Analysis != nil:
		// The analysis the job ended with (Runner.end), so the payload
		// says what the API says.
		if j.Analysis.HasRuns() {
			a = j.Analysis
		}
	default: // ended before it kept an analysis (canceled while queued)
		runs, err := n.st.Runs(ctx, j.ID)
		if err != nil {
			return err
		}
		if len(runs) > 0 {
			an, err := jobend.Analyze(ctx, n.st, j, runs)
			if err != nil {
				return err
			}
			a = &an
		}
	}
	now := n.now().UTC()
	body, err := webhook.Encode(webhook.NewPayload(event, j, a, n.cfg.LinkBase, now))
	if err != nil {
		return err
	}
	return n.queue(ctx, j.Owner, &webhook.Delivery{
		JobID: j.ID, ID: webhook.MessageID(j.ID, event), Event: event, URL: j.Spec.Webhook.URL,
		Status: webhook.StatusPending, MaxRetry: len(n.cfg.Schedule),
		CreatedAt: now, UpdatedAt: now, Payload: body,
	})
}

// queue records d, unless its job has a delivery of its event already,
// and enqueues it under owner.
func (n *WebhookNotifier) queue(ctx context.Context, owner string, d *webhook.Delivery) error {
	created, err := n.st.CreateDelivery(ctx, d)
	if err != nil {
		return err
	}
	if !created && d.Status != webhook.StatusPending {
		return nil // under way or done: this is a retried attempt's notify
	}
	// A pending delivery found here may have lost its task (the process
	// died between creating and enqueueing it); the task's ID makes the
	// enqueue a no-op when the task is still there.
	return n.enqueue(ctx, owner, d)
}

// enqueue puts d's current round on the queue, under the job's owner. If
// that fails, d is marked failed: left pending it would count as in flight
// forever, and a redelivery would be refused with 409.
func (n *WebhookNotifier) enqueue(ctx context.Context, owner string, d *webhook.Delivery) error {
	task, err := queue.NewWebhookDeliverTask(d.JobID, owner, d.N, d.Redeliveries, d.MaxRetry)
	if err != nil {
		return err
	}
	_, err = n.q.EnqueueContext(ctx, task)
	if err == nil || errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	err = fmt.Errorf("enqueue delivery %d: %w", d.N, err)
	ctx, cancel := detached(ctx)
	defer cancel()
	_, uerr := n.st.UpdateDelivery(ctx, d.JobID, d.N, func(x *webhook.Delivery) error {
		if x.Status == webhook.StatusPending && x.Redeliveries == d.Redeliveries {
			x.Status, x.UpdatedAt = webhook.StatusFailed, n.now().UTC()
		}
		return nil
	})
	if uerr != nil {
		return fmt.Errorf("%w; and marking it failed: %w", err, uerr)
	}
	return err
}

// deliveryStore is what the Deliverer needs; *store.Store implements it.
type deliveryStore interface {
	Delivery(ctx context.Context, id string, n int) (*webhook.Delivery, error)
	WebhookSecret(ctx context.Context, id string) (string, error)
	AppendAttempt(ctx context.Context, id string, n int, a *webhook.Attempt) error
	UpdateDelivery(ctx context.Context, id string, n int, fn func(*webhook.Delivery) error) (*webhook.Delivery, error)
	forgeStore // forge.go
}

// WebhookConfig configures the webhook delivery server.
type WebhookConfig struct {
	// Concurrency is how many deliveries run at once; zero means 10.
	Concurrency int
	// PerOwner is how many of them may be one owner's (API key's) at once
	// while half the slots are in use (below that an owner may go over
	// it), so receivers that never answer hold up only their own tenant's
	// deliveries; a delivery over its owner's share waits in the queue
	// without taking a slot. Zero means a quarter of Concurrency, at least
	// one; it is never more than Concurrency.
	PerOwner int
	// Schedule is the wait before each retry; nil means
	// webhook.DefaultSchedule().
	Schedule webhook.Schedule
	// Timeout bounds one attempt; zero means 10s.
	Timeout time.Duration
	// Dial opens every connection to a receiver: the address policy plugs
	// in here. Nil means netguard's loopback-only dialer.
	Dial webhook.DialContext
	// Now is the clock of webhook-timestamp (each attempt is signed anew at
	// its own time); nil means time.Now.
	Now func() time.Time
	// Forge sends jobs' notify deliveries (forge.go); nil fails them.
	Forge *forge.Client
	// ForgeTokens are the service's forge tokens, by forge
	// (job.ForgeGitHub, job.ForgeGitLab), for jobs whose template keeps
	// none.
	ForgeTokens map[string]string
	// Logger; nil means slog.Default().
	Logger *slog.Logger
}

func (c WebhookConfig) withDefaults() WebhookConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultWebhookConcurrency
	}
	if c.PerOwner <= 0 {
		c.PerOwner = max(c.Concurrency/webhookShareDivisor, 1)
	}
	c.PerOwner = min(c.PerOwner, c.Concurrency)
	if c.Schedule == nil {
		c.Schedule = webhook.DefaultSchedule()
	}
	if c.Timeout <= 0 {
		c.Timeout = webhook.DefaultTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Dial == nil {
		p := netguard.LoopbackOnly()
		c.Dial = (&netguard.Dialer{Policy: p, Dialer: &net.Dialer{Control: p.Control}}).DialContext
	}
	return c
}

// Deliverer handles webhook:deliver tasks: one call is one attempt.
type Deliverer struct {
	st          deliveryStore
	sender      *webhook.Sender
	forge       *forge.Client
	forgeTokens map[string]string
	schedule    webhook.Schedule
	shares      *ownerShares
	log         *slog.Logger
}

// NewDeliverer returns a Deliverer on st; Webhooks builds one, tests may
// call its HandleWebhookDeliver directly.
func NewDeliverer(st *store.Store, cfg WebhookConfig) *Deliverer {
	return newDeliverer(st, cfg.withDefaults())
}

func newDeliverer(st deliveryStore, cfg WebhookConfig) *Deliverer {
	return &Deliverer{
		st:     st,
		sender: &webhook.Sender{Client: webhook.NewClient(cfg.Dial, cfg.Timeout), Now: cfg.Now},
		forge:  cfg.Forge, forgeTokens: cfg.ForgeTokens,
		schedule: cfg.Schedule, shares: newOwnerShares(cfg.PerOwner, cfg.Concurrency), log: cfg.Logger,
	}
}

// attemptError is returned for an attempt to retry; asynq's retry
// delay reads the receiver's Retry-After from it.
type attemptError struct {
	retryAfter time.Duration
	msg        string
}

func (e *attemptError) Error() string { return e.msg }

// HandleWebhookDeliver makes one attempt at the delivery named by t and
// logs it. It returns nil when delivered (or found delivered already), an
// error wrapping asynq.SkipRetry when retrying is pointless (410, the
// delivery or its secret gone or unusable), one wrapping errOwnerBusy,
// before any attempt, when the owner's share of the server is in flight,
// and another error for asynq to retry on the schedule.
func (d *Deliverer) HandleWebhookDeliver(ctx context.Context, t *asynq.Task) error {
	p, err := queue.ParseWebhookDeliver(t)
	if err != nil {
		return fmt.Errorf("worker: %w: %w", err, asynq.SkipRetry)
	}
	// asynq archives a task on its last retry whatever the error, so the
	// last attempt is made over the share rather than lost unmade.
	id, _ := asynq.GetTaskID(ctx)
	if !d.shares.acquire(p.Owner, id, lastAttempt(ctx)) {
		return &ownerBusyError{wait: d.shares.wait(id),
			msg: fmt.Sprintf("worker: delivery %d of job %s: %s", p.Delivery, p.JobID, errOwnerBusy)}
	}
	defer d.shares.release(p.Owner)
	return d.deliver(ctx, p)
}

// deliver is HandleWebhookDeliver's attempt, within the owner's share.
func (d *Deliverer) deliver(ctx context.Context, p queue.WebhookDeliverPayload) error {
	del, err := d.st.Delivery(ctx, p.JobID, p.Delivery)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("worker: %w: %w", err, asynq.SkipRetry) // expired with its job
	}
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	if del.Status == webhook.StatusDelivered || del.Status == webhook.StatusGone || del.Status == webhook.StatusSuperseded {
		d.log.Info("worker: webhook already settled", "job", del.JobID, "delivery", del.N, "status", del.Status)
		return nil
	}
	if _, ok := job.ForgeDelivery(del.Event); ok {
		return d.deliverForge(ctx, p, del) // forge.go
	}
	sig, err := d.signer(ctx, p.JobID)
	switch {
	case errors.Is(err, store.ErrNotFound) || errors.Is(err, webhook.ErrBadSecret):
		d.setStatus(ctx, del, webhook.StatusFailed)
		return fmt.Errorf("worker: delivery %d of job %s: %w: %w", del.N, del.JobID, err, asynq.SkipRetry)
	case err != nil: // Redis: worth another try, on the schedule
		if lastAttempt(ctx) {
			d.setStatus(ctx, del, webhook.StatusFailed) // asynq archives the task after this
		}
		return fmt.Errorf("worker: delivery %d of job %s: %w", del.N, del.JobID, err)
	}
	return d.settle(ctx, del, d.sender.Send(ctx, del.URL, del.ID, sig, del.Payload))
}

// settle logs attempt a at del and records where del stands after it,
// returning what HandleWebhookDeliver returns for it.
func (d *Deliverer) settle(ctx context.Context, del *webhook.Delivery, a webhook.Attempt) error {
	if err := d.st.AppendAttempt(ctx, del.JobID, del.N, &a); err != nil {
		d.log.Warn("worker: log webhook attempt", "job", del.JobID, "delivery", del.N, "err", err)
	}
	d.log.Info("worker: webhook attempt", "job", del.JobID, "delivery", del.N, "event", del.Event,
		"attempt", a.N, "status_code", a.StatusCode, "outcome", a.Outcome, "error", a.Error, "duration_ms", a.DurationMs)
	switch a.Outcome {
	case webhook.OutcomeDelivered:
		d.setStatus(ctx, del, webhook.StatusDelivered)
		return nil
	case webhook.OutcomeGone:
		d.setStatus(ctx, del, webhook.StatusGone)
		return fmt.Errorf("worker: delivery %d of job %s: receiver answered 410: %w", del.N, del.JobID, asynq.SkipRetry)
	case webhook.OutcomeRejected:
		d.setStatus(ctx, del, webhook.StatusFailed)
		return fmt.Errorf("worker: delivery %d of job %s: rejected: %s: %w", del.N, del.JobID, a.Error, asynq.SkipRetry)
	}
	status := webhook.StatusRetrying
	if lastAttempt(ctx) {
		status = webhook.StatusFailed // asynq archives the task after this
	}
	d.setStatus(ctx, del, status)
	why := a.Error
	if why == "" {
		why = fmt.Sprintf("status %d", a.StatusCode)
	}
	return &attemptError{
		retryAfter: time.Duration(a.RetryAfterMs) * time.Millisecond,
		msg:        fmt.Sprintf("worker: delivery %d of job %s: attempt %d: %s", del.N, del.JobID, a.N, why),
	}
}

func (d *Deliverer) signer(ctx context.Context, jobID string) (*webhook.Signer, error) {
	secret, err := d.st.WebhookSecret(ctx, jobID)
	if err != nil {
		return nil, err
	}
	return webhook.NewSigner(secret)
}

// setStatus records where a delivery stands; a failure is logged only,
// since the attempt itself is already logged.
func (d *Deliverer) setStatus(ctx context.Context, del *webhook.Delivery, s webhook.Status) {
	ctx, cancel := detached(ctx)
	defer cancel()
	_, err := d.st.UpdateDelivery(ctx, del.JobID, del.N, func(x *webhook.Delivery) error {
		x.Status, x.UpdatedAt = s, time.Now().UTC()
		return nil
	})
	if err != nil {
		d.log.Warn("worker: record webhook status", "job", del.JobID, "delivery", del.N, "status", s, "err", err)
	}
}

// retryDelay follows the schedule, waiting longer when the receiver asked
// to with Retry-After (up to webhook.MaxRetryAfter, so a receiver cannot
// park a delivery for a year). A delivery sent back for its owner's share
// comes back after the wait ownerShares gave it.
func (d *Deliverer) retryDelay(n int, err error, _ *asynq.Task) time.Duration {
	var busy *ownerBusyError
	if errors.As(err, &busy) {
		return busy.wait
	}
	var held *heldError
	if errors.As(err, &held) {
		return held.wait
	}
	wait := d.schedule.Delay(n)
	var ae *attemptError
	if errors.As(err, &ae) && ae.retryAfter > 0 {
		if ra := min(ae.retryAfter, webhook.MaxRetryAfter); ra >= wait {
			wait = notBefore(time.Now(), ra)
		}
	}
	return wait
}

// notBefore turns a wait that must not end early into one asynq keeps:
// asynq files a retry under its due time in whole Unix seconds, rounded
// down, so a plain wait can end up to a second early. The result ends on
// the first whole second at or after now+d. (Schedule waits carry ±10 %
// jitter anyway and are not rounded.)
func notBefore(now time.Time, d time.Duration) time.Duration {
	due := now.Add(d)
	end := due.Truncate(time.Second)
	if end.Before(due) {
		end = end.Add(time.Second)
	}
	return end.Sub(now)
}

// Webhooks serves the webhooks queue with its own asynq server, so many
// short deliveries never wait behind a benchmark.
type Webhooks struct {
	srv *asynq.Server
	mux *asynq.ServeMux
}

// NewWebhooks builds the delivery server on the process's shared Redis
// client; Start or Run starts it.
func NewWebhooks(rdb redis.UniversalClient, st *store.Store, cfg WebhookConfig) *Webhooks {
	cfg = cfg.withDefaults()
	d := newDeliverer(st, cfg)
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency:              cfg.Concurrency,
		Queues:                   map[string]int{queue.QueueWebhooks: 1},
		RetryDelayFunc:           d.retryDelay,
		IsFailure:                webhookIsFailure,
		TaskCheckInterval:        pollInterval(cfg.Schedule),
		DelayedTaskCheckInterval: pollInterval(cfg.Schedule),
		ShutdownTimeout:          cfg.Timeout + cleanupTimeout,
		Logger:                   asynqLogger{cfg.Logger},
		LogLevel:                 asynq.WarnLevel,
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc(queue.TypeWebhookDeliver, d.HandleWebhookDeliver)
	return &Webhooks{srv: srv, mux: mux}
}

// webhookIsFailure keeps a delivery sent back for its owner's share, or
// held behind another delivery of its job (forge.go), from using up its
// retries: no attempt was made.
func webhookIsFailure(err error) bool {
	return !errors.Is(err, errOwnerBusy) && !errors.Is(err, errHeld)
}

// pollInterval is how often the delivery server looks for work: half the
// shortest wait, within [20ms, 1s].
func pollInterval(s webhook.Schedule) time.Duration {
	shortest := maxDelayedCheck
	for _, d := range s {
		shortest = min(shortest, d/2)
	}
	return max(shortest, minDelayedCheck)
}

// Start starts delivering in the background.
func (w *Webhooks) Start() error {
	if err := w.srv.Start(w.mux); err != nil {
		return fmt.Errorf("worker: start webhooks: %w", err)
	}
	return nil
}

// Shutdown stops taking deliveries and waits for attempts in flight.
func (w *Webhooks) Shutdown() { w.srv.Shutdown() }

// Run starts the server, blocks until ctx is done, then shuts down.
func (w *Webhooks) Run(ctx context.Context) error {
	if err := w.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	w.Shutdown()
	return nil
}

// NotifyChangePoints enqueues job j's trend.change_point event carrying
// found, the change points its end was the first to find, if j's webhook
// lists the event. A job has one such event: the store announces each
// change point once (store.RecordChangePoints), with the job whose end
// found it.
func (n *WebhookNotifier) NotifyChangePoints(ctx context.Context, j *job.Job, found []job.ChangePoint) error {
	const event = job.EventChangePoint
	if len(found) == 0 || !webhook.Subscribed(j, event) {
		return nil
	}
	now := n.now().UTC()
	p := webhook.NewPayload(event, j, nil, n.cfg.LinkBase, now)
	p.WithChangePoints(found)
	body, err := webhook.Encode(p)
	if err != nil {
		return fmt.Errorf("worker: %s webhook of job %s: %w", event, j.ID, err)
	}
	d := &webhook.Delivery{
		JobID: j.ID, ID: webhook.MessageID(j.ID, event), Event: event, URL: j.Spec.Webhook.URL,
		Status: webhook.StatusPending, MaxRetry: len(n.cfg.Schedule),
		CreatedAt: now, UpdatedAt: now, Payload: body,
	}
	created, err := n.st.CreateDelivery(ctx, d)
	if err != nil {
		return fmt.Errorf("worker: %s webhook of job %s: %w", event, j.ID, err)
	}
	if !created && d.Status != webhook.StatusPending {
		return nil
	}
	if err := n.enqueue(ctx, j.Owner, d); err != nil {
		return fmt.Errorf("worker: enqueue %s webhook of job %s: %w", event, j.ID, err)
	}
	return nil
}
