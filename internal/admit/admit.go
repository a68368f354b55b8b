package admit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
	"github.com/benchq/benchq/internal/undo"
	"github.com/benchq/benchq/internal/webhook"
)

// PersistTimeout bounds storing and enqueueing an accepted job, which
// runs detached from the caller's context so that a hang-up between the
// two does not discard a job that was about to be accepted.
const PersistTimeout = 10 * time.Second

// errNoURLPolicy is an internal error: an Admitter built without an
// address policy refuses every target rather than load any address.
var errNoURLPolicy = errors.New("admit: no URL policy configured")

// Store keeps jobs; *store.Store implements it.
type Store interface {
	CreateJob(ctx context.Context, j *job.Job) error
	GetJob(ctx context.Context, id string) (*job.Job, error)
	// DiscardJob undoes a creation that failed before the job was
	// accepted: the job if still queued, its index entries, its secret
	// and its slot.
	DiscardJob(ctx context.Context, j *job.Job) error
}

// SecretStore keeps the secret that signs a job's webhooks, apart from
// the job; *store.Store implements it.
type SecretStore interface {
	SetWebhookSecret(ctx context.Context, id, secret string) error
}

// TargetChecker checks that a job's target hosts serve the owner's
// verification tokens; *targetverify.Verifier implements it.
type TargetChecker interface {
	CheckSpec(ctx context.Context, owner string, targets []job.TargetURL) error
}

// KeyFinder finds the API key that owns a template; *store.Store
// implements it.
type KeyFinder interface {
	KeyByID(ctx context.Context, id string) (apikey.Key, error)
}

// Config tunes an Admitter. Zero values mean the documented default.
type Config struct {
	// Limits bound what a job may ask for; zero means job.DefaultLimits().
	Limits *job.Limits
	// Quota is the service-wide quota of a key that sets none; its zero
	// fields take the defaults of quota.go. Its per-run fields are
	// Limits'.
	Quota apikey.Quota
	// URLPolicy is the address policy for the URLs of one creation,
	// bound to its context (the DNS lookups of a submission end with it
	// and share one budget). Required: nil refuses every URL rather than
	// allow all.
	URLPolicy func(ctx context.Context) job.URLChecker
	// VerifyTargets refuses jobs whose target hosts do not serve the
	// caller's token (Deps.Targets checks them; without it, 503).
	VerifyTargets bool
	// Log gets what an undone creation left behind; nil discards.
	Log *slog.Logger
}

// Deps are the parts an Admitter drives.
type Deps struct {
	Store Store
	Queue queue.Enqueuer
	// Undo retries the undoing of half-done creations while Redis is
	// away; nil means one of the Admitter's own that never closes.
	Undo *undo.Undoer
	// Quotas enforces active jobs and submission rate; nil disables both.
	// Per-run quotas apply regardless.
	Quotas QuotaStore
	// Secrets keeps webhook secrets; nil refuses jobs with a webhook (503).
	Secrets SecretStore
	// Targets checks target verification; nil refuses every job when
	// Config.VerifyTargets is on (503).
	Targets TargetChecker
	// Selector resolves compare_to selectors; nil refuses jobs with one
	// (503).
	Selector JobSelector
	// Keys finds a template's owner; nil refuses to run the templates of
	// any key (503).
	Keys KeyFinder
}

// Admitter creates jobs: the one way a spec becomes a queued job.
type Admitter struct {
	cfg     Config
	deps    Deps
	service apikey.Quota // the service-wide quota, defaults filled in
	log     *slog.Logger
}

// New returns an Admitter over deps.
func New(cfg Config, deps Deps) *Admitter {
	if cfg.Limits == nil {
		l := job.DefaultLimits()
		cfg.Limits = &l
	}
	if cfg.URLPolicy == nil {
		cfg.URLPolicy = func(context.Context) job.URLChecker {
			return func(*url.URL) error { return errNoURLPolicy }
		}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Undo == nil {
		deps.Undo = undo.New(context.Background(), cfg.Log)
	}
	return &Admitter{cfg: cfg, deps: deps, service: serviceQuota(cfg), log: cfg.Log}
}

// Create creates a job of spec for who: it fills the spec's defaults,
// charges the submission rate, validates the spec against who's limits
// and the address policy, verifies its targets, pins compare_to, takes an
// active-job slot, keeps the webhook secret, stores the job and enqueues
// it. It returns the job and the webhook secret to show (one generated
// for it, "" otherwise). from names the creation in the logs. What who
// did wrong or may retry is an *errcode.Error; a failure half-way leaves
// nothing behind.
func (a *Admitter) Create(ctx context.Context, who Caller, spec job.Spec, from Source) (*job.Job, string, error) {
	spec = spec.WithDefaults()
	if err := a.ChargeSubmission(ctx, who); err != nil { // quota.go: 429 over the rate, before any DNS or verification request
		return nil, "", err
	}
	if err := spec.Validate(a.Limits(who), a.cfg.URLPolicy(ctx)); err != nil {
		return nil, "", err
	}
	if err := a.verifyTargets(ctx, who.KeyID, spec); err != nil { // 422 for a host without its token
		return nil, "", err
	}
	var err error
	if spec.CompareTo, err = a.resolveCompareTo(ctx, who, spec.CompareTo); err != nil { // compare.go: pin it to one job
		return nil, "", err
	}
	j := &job.Job{
		ID:        job.NewID(),
		Owner:     who.KeyID,
		Spec:      spec,
		Status:    job.StatusQueued,
		CreatedAt: time.Now().UTC(),
		Progress:  job.Progress{RunsTotal: len(spec.Schedule())},
	}
	if err := a.reserveActive(ctx, who, j); err != nil { // quota.go: 429 over the active-job quota
		return nil, "", err
	}
	// From the slot on, what was written for j is discarded unless the job
	// is accepted: a creation that fails half-way (Redis gone or refusing
	// writes between two steps) leaves no job, secret or slot behind.
	accepted := false
	defer func() {
		if !accepted {
			a.discard(from, j)
		}
	}()
	secret, err := a.webhookSecret(ctx, who, j)
	if err != nil {
		return nil, "", err
	}
	// Detached, so that a client hanging up between storing and enqueueing
	// does not turn a job that would have been accepted into a discarded one.
	persist, cancel := context.WithTimeout(context.WithoutCancel(ctx), PersistTimeout)
	defer cancel()
	if err := a.deps.Store.CreateJob(persist, j); err != nil {
		return nil, "", fmt.Errorf("admit: create job: %w", err)
	}
	if err := a.enqueue(persist, j); err != nil {
		return nil, "", err
	}
	accepted = true // enqueued: the job exists, whatever happens to the answer
	return j, secret, nil
}

// verifyTargets refuses a job whose target hosts do not serve the
// caller's tokens, when verification is on: a 422 naming each target
// field and the file to publish.
func (a *Admitter) verifyTargets(ctx context.Context, owner string, spec job.Spec) error {
	if !a.cfg.VerifyTargets {
		return nil
	}
	if a.deps.Targets == nil {
		return errcode.New(errcode.Unavailable, "target verification is not configured on this server")
	}
	if err := a.deps.Targets.CheckSpec(ctx, owner, spec.TargetURLs()); err != nil {
		if errors.Is(err, targetverify.ErrUnverified) {
			return err
		}
		return fmt.Errorf("admit: verify targets: %w", err)
	}
	return nil
}

// webhookSecret stores the secret that will sign job j's webhooks and
// returns it when the caller must be told (a generated one); a key with
// its own secret uses that, and nothing is returned.
func (a *Admitter) webhookSecret(ctx context.Context, who Caller, j *job.Job) (string, error) {
	if j.Spec.Webhook == nil {
		return "", nil
	}
	if a.deps.Secrets == nil {
		return "", errcode.New(errcode.Unavailable, "webhooks are not configured on this server")
	}
	secret, shown := who.WebhookSecret, ""
	if secret == "" {
		secret = webhook.NewSecret()
		shown = secret
	}
	if err := a.deps.Secrets.SetWebhookSecret(ctx, j.ID, secret); err != nil {
		return "", fmt.Errorf("admit: create job: %w", err)
	}
	return shown, nil
}

// enqueue hands a stored job to the workers.
func (a *Admitter) enqueue(ctx context.Context, j *job.Job) error {
	task, err := queue.NewJobRunTask(j.ID, j.Spec.Estimate())
	if err == nil {
		_, err = queue.Enqueue(ctx, a.deps.Queue, task)
	}
	if err != nil {
		return fmt.Errorf("admit: enqueue job %s: %w", j.ID, err)
	}
	return nil
}

// discard undoes a creation of j that was not accepted.
func (a *Admitter) discard(from Source, j *job.Job) {
	a.deps.Undo.Run("discard job "+j.ID+" ("+from.String()+")", undo.RetryFor, func(ctx context.Context) error {
		err := a.deps.Store.DiscardJob(ctx, j)
		if errors.Is(err, store.ErrConflict) {
			// The enqueue reported a failure but reached the queue, and
			// a worker took the job: it runs, though the answer was an
			// error.
			a.log.Warn("admit: job answered as not created was taken by a worker", "source", from.String(), "job", j.ID, "err", err)
			return nil
		}
		return err
	})
}
