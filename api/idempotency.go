package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// idempotencyHeader makes POST /v1/jobs safe to retry: the same key with
// the same body within store.IdempotencyTTL returns the job the first
// request created instead of creating another.
const idempotencyHeader = "Idempotency-Key"

const (
	maxIdempotencyKeyLen = 255
	// idempotencyCreateTimeout bounds creating a job under a claim. Target
	// verification alone fetches each target host, one after another, for
	// up to targetverify.DefaultTimeout (5 s) each, so creation can take
	// seconds; it must end, and the claim be settled, well before
	// store.IdempotencyClaimTTL (60 s) frees the key for a retry, which
	// would then create a second job.
	idempotencyCreateTimeout = 20 * time.Second
	// idempotencyWait is how long a request waits for a concurrent one
	// with its key: past that one's creation deadline, plus a margin for
	// settling the claim, so that it gets the job (200), or the key when
	// no job was made, rather than a 409. It stays below the server's
	// default WriteTimeout (30 s) so the answer can still be written.
	idempotencyWait = idempotencyCreateTimeout + 5*time.Second
	idempotencyPoll = 25 * time.Millisecond
	// persistTimeout is how long a creation may still store and enqueue
	// its job past idempotencyCreateTimeout: that part runs detached.
	persistTimeout = admit.PersistTimeout
)

// idempotencyTiming is how long a claimant may create its job and a
// concurrent request waits for it; tests shorten both.
type idempotencyTiming struct {
	create, wait time.Duration
}

// orDefaults is t, or the constants above when t is the zero value.
func (t idempotencyTiming) orDefaults() idempotencyTiming {
	if t.create <= 0 || t.wait <= 0 {
		return idempotencyTiming{create: idempotencyCreateTimeout, wait: idempotencyWait}
	}
	return t
}

// IdempotencyStore remembers which job an Idempotency-Key created, one
// claim at a time, and reads back the webhook secret generated for that
// job so a replay can show it again; *store.Store implements it.
type IdempotencyStore interface {
	ClaimIdempotencyKey(ctx context.Context, owner, key, bodyHash string) (store.IdempotencyRecord, bool, error)
	CompleteIdempotencyKey(ctx context.Context, claim store.IdempotencyRecord, jobID string, secretIssued bool) error
	// CompleteDelivery is CompleteIdempotencyKey for a CI delivery, kept
	// as long as the CI system may redeliver it.
	CompleteDelivery(ctx context.Context, claim store.IdempotencyRecord, jobID string) error
	ReleaseIdempotencyKey(ctx context.Context, rec store.IdempotencyRecord) error
	WebhookSecret(ctx context.Context, id string) (string, error)
}

// createIdempotent serves a POST /v1/jobs with an Idempotency-Key, scoped
// to the caller's API key. The first request claims the key in Redis and
// creates the job (createClaimed); a request with the key and the
// same body (SHA-256 of the raw bytes) gets that job with 200, waiting
// for it if the first is still creating it; another body is a 409. A
// first request that creates no job (invalid spec, quota, queue down)
// frees the key, so a corrected retry goes through.
func (s *Server) createIdempotent(c echo.Context) error {
	key, err := idempotencyKeyOf(c.Request().Header)
	if err != nil {
		return err
	}
	if s.idempotency == nil {
		return errcode.New(errcode.Unavailable, "no idempotency store")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, s.cfg.MaxBody))
	if err != nil {
		return decodeError(err, s.cfg.MaxBody)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	ctx, owner := c.Request().Context(), principalOf(c).KeyID
	timing := s.idempotencyTiming.orDefaults()
	for deadline := time.Now().Add(timing.wait); ; {
		rec, won, err := s.idempotency.ClaimIdempotencyKey(ctx, owner, key, hash)
		switch {
		case err != nil:
			return fmt.Errorf("api: %w", err)
		case won:
			return s.createClaimed(c, rec, body, timing.create)
		case rec.BodyHash != hash:
			return errcode.New(errcode.IdempotencyConflict, "this Idempotency-Key was used with a different body; send a new key for a new job").WithField(idempotencyHeader)
		case !rec.Pending():
			j, err := s.ownedJob(c, rec.JobID)
			if errors.Is(err, store.ErrNotFound) {
				// The job expired before the key: the key names nothing.
				if err := s.releaseClaim(ctx, rec); err != nil {
					return fmt.Errorf("api: %w", err)
				}
				continue
			}
			if err != nil {
				return err
			}
			return s.replay(c, rec, j)
		}
		if time.Now().After(deadline) {
			return errcode.New(errcode.IdempotencyInProgress, "a request with this Idempotency-Key is still being processed; retry later").WithField(idempotencyHeader)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("api: wait for idempotency key: %w", ctx.Err())
		case <-time.After(idempotencyPoll):
		}
	}
}

// replay answers a request whose key already names job j with that job,
// and with the webhook secret generated for it when the first answer
// carried one: a client retries exactly when it lost that answer, and
// without the secret it could verify no delivery. The key is scoped to
// the caller's API key, so only the caller that was shown the secret
// sees it again; a key's own secret is never shown.
func (s *Server) replay(c echo.Context, rec store.IdempotencyRecord, j *job.Job) error {
	resp := CreateJobResponse{JobResponse: newJobResponse(j)}
	if rec.SecretIssued {
		secret, err := s.idempotency.WebhookSecret(c.Request().Context(), j.ID)
		switch {
		case errors.Is(err, store.ErrNotFound): // expired with the job's data
		case err != nil:
			return fmt.Errorf("api: replay job %s: %w", j.ID, err)
		case secret != principalOf(c).WebhookSecret:
			resp.WebhookSecret = secret
		}
	}
	c.Response().Header().Set(echo.HeaderLocation, jobPath(j.ID))
	c.Response().Header().Set("Idempotent-Replayed", "true")
	return c.JSON(http.StatusOK, resp)
}

// createClaimed creates the job of a claimed key within timeout, and
// records it, or frees the key when no job was accepted. The timeout is
// what keeps the claim from expiring under a slow creation.
func (s *Server) createClaimed(c echo.Context, claim store.IdempotencyRecord, body []byte, timeout time.Duration) error {
	j, secret, err := s.createWithin(c, body, timeout)
	// The claim must be settled even when the client hung up meanwhile.
	ctx := context.WithoutCancel(c.Request().Context())
	if err != nil {
		s.releaseClaimLater("release idempotency key (request "+requestID(c)+")", claim)
		return err
	}
	// A replay shows the secret again only when this answer shows one: a
	// secret generated for the job, not the key's own (admit.Create).
	if cerr := s.idempotency.CompleteIdempotencyKey(ctx, claim, j.ID, secret != ""); cerr != nil {
		// The job exists and is answered with 202; only a retry of this
		// request could now create a second one.
		s.log.Error("api: record idempotency key", "request_id", requestID(c), "job", j.ID, "err", cerr)
	}
	return created(c, j, secret)
}

// releaseClaim frees a claimed key. A claim lost meanwhile (it expired
// and another request holds the key now) is not this request's to free.
func (s *Server) releaseClaim(ctx context.Context, claim store.IdempotencyRecord) error {
	if err := s.idempotency.ReleaseIdempotencyKey(ctx, claim); err != nil && !errors.Is(err, store.ErrIdempotencyClaimLost) {
		return err
	}
	return nil
}

// releaseClaimLater frees a claim no job was created under, through
// internal/undo so that it is freed even when Redis is gone meanwhile: a
// claim left pending would make every retry wait and get a 409 until it
// expires. Past its TTL it is free anyway.
func (s *Server) releaseClaimLater(what string, claim store.IdempotencyRecord) {
	s.undo.Run(what, store.IdempotencyClaimTTL, func(ctx context.Context) error { return s.releaseClaim(ctx, claim) })
}

// createWithin decodes body and creates its job within timeout.
func (s *Server) createWithin(c echo.Context, body []byte, timeout time.Duration) (*job.Job, string, error) {
	spec, err := job.Decode(bytes.NewReader(body))
	if err != nil {
		return nil, "", decodeError(err, s.cfg.MaxBody)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
	defer cancel()
	j, secret, err := s.admit.Create(ctx, principalOf(c), spec, sourceOf(c, admit.ViaIdempotentAPI))
	if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = errcode.Wrapf(err, errcode.Unavailable, "creating the job took over %s; retry with the same %s", timeout, idempotencyHeader)
	}
	return j, secret, err
}

// idempotencyKeyOf reads the one Idempotency-Key: 1 to 255 printable
// ASCII characters, as the IETF draft's examples and Stripe's limit.
func idempotencyKeyOf(h http.Header) (string, error) {
	vals := h.Values(idempotencyHeader)
	bad := func(format string, args ...any) error {
		return errcode.Newf(errcode.BadIdempotencyKey, "invalid Idempotency-Key: "+format, args...).WithField(idempotencyHeader)
	}
	if len(vals) != 1 {
		return "", bad("send it once, not %d times", len(vals))
	}
	key := vals[0]
	if key == "" || len(key) > maxIdempotencyKeyLen {
		return "", bad("want 1 to %d characters, got %d", maxIdempotencyKeyLen, len(key))
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", bad("want printable ASCII, got byte 0x%02x at %d", key[i], i)
		}
	}
	return key, nil
}
