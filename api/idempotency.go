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
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/store"
)

// idempotencyHeader makes POST /v1/jobs safe to retry: the same key with
// the same body within store.IdempotencyTTL returns the job the first
// request created instead of creating another.
const idempotencyHeader = "Idempotency-Key"

const (
	maxIdempotencyKeyLen = 255
	// idempotencyWait bounds how long a request waits for a concurrent
	// one with its key to create the job; creating one takes milliseconds.
	idempotencyWait = 5 * time.Second
	idempotencyPoll = 25 * time.Millisecond
	// idempotencyClaimed marks a request whose key this server claimed,
	// so handleCreateJob creates its job instead of coming back here.
	idempotencyClaimed = "benchq.idempotency-claimed"
)

var (
	errIdempotencyKey      = errors.New("api: invalid Idempotency-Key")
	errIdempotencyConflict = errors.New("api: Idempotency-Key already used with a different body")
	errIdempotencyPending  = errors.New("api: a request with this Idempotency-Key is still being processed")
)

// IdempotencyStore remembers which job an Idempotency-Key created, one
// claim at a time; *store.Store implements it.
type IdempotencyStore interface {
	ClaimIdempotencyKey(ctx context.Context, owner, key, bodyHash string) (store.IdempotencyRecord, bool, error)
	CompleteIdempotencyKey(ctx context.Context, claim store.IdempotencyRecord, jobID string) error
	ReleaseIdempotencyKey(ctx context.Context, rec store.IdempotencyRecord) error
}

// wantsIdempotency reports whether a POST /v1/jobs carries the header
// and has not been claimed yet.
func wantsIdempotency(c echo.Context) bool {
	_, ok := c.Request().Header[idempotencyHeader]
	return ok && c.Get(idempotencyClaimed) == nil
}

// createIdempotent serves a POST /v1/jobs with an Idempotency-Key, scoped
// to the caller's API key. The first request claims the key in Redis and
// creates the job through handleCreateJob; a request with the key and the
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
		return fmt.Errorf("%w: no idempotency store", errUnavailable)
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), c.Request().Body, s.cfg.MaxBody))
	if err != nil {
		return decodeError(err, s.cfg.MaxBody)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	ctx, owner := c.Request().Context(), principalOf(c).KeyID
	for deadline := time.Now().Add(idempotencyWait); ; {
		rec, won, err := s.idempotency.ClaimIdempotencyKey(ctx, owner, key, hash)
		switch {
		case err != nil:
			return fmt.Errorf("api: %w", err)
		case won:
			return s.createClaimed(c, rec, body)
		case rec.BodyHash != hash:
			return fieldError{field: idempotencyHeader, err: fmt.Errorf("%w: send a new key for a new job", errIdempotencyConflict)}
		case !rec.Pending():
			j, err := s.ownedJob(c, rec.JobID)
			if errors.Is(err, store.ErrNotFound) {
				// The job expired before the key: the key names nothing.
				if err := s.idempotency.ReleaseIdempotencyKey(ctx, rec); err != nil && !errors.Is(err, store.ErrIdempotencyClaimLost) {
					return fmt.Errorf("api: %w", err)
				}
				continue
			}
			if err != nil {
				return err
			}
			c.Response().Header().Set(echo.HeaderLocation, jobPath(j.ID))
			c.Response().Header().Set("Idempotent-Replayed", "true")
			return c.JSON(http.StatusOK, newJobResponse(j))
		}
		if time.Now().After(deadline) {
			return fieldError{field: idempotencyHeader, err: fmt.Errorf("%w: retry later", errIdempotencyPending)}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("api: wait for idempotency key: %w", ctx.Err())
		case <-time.After(idempotencyPoll):
		}
	}
}

// createClaimed creates the job of a claimed key and records it, or frees
// the key when no job was accepted.
func (s *Server) createClaimed(c echo.Context, claim store.IdempotencyRecord, body []byte) error {
	c.Request().Body = io.NopCloser(bytes.NewReader(body))
	c.Set(idempotencyClaimed, true)
	err := s.handleCreateJob(c)
	// The claim must be settled even when the client hung up meanwhile.
	ctx := context.WithoutCancel(c.Request().Context())
	id := createdJobID(c)
	if err != nil || id == "" {
		if rerr := s.idempotency.ReleaseIdempotencyKey(ctx, claim); rerr != nil {
			s.log.Warn("api: release idempotency key", "request_id", requestID(c), "err", rerr)
		}
		return err
	}
	if cerr := s.idempotency.CompleteIdempotencyKey(ctx, claim, id); cerr != nil {
		// The job exists and was answered with 202; only a retry of this
		// request could now create a second one.
		s.log.Error("api: record idempotency key", "request_id", requestID(c), "job", id, "err", cerr)
	}
	return nil
}

// createdJobID is the job handleCreateJob accepted, read from its 202's
// Location, or "" when it accepted none.
func createdJobID(c echo.Context) string {
	if c.Response().Status != http.StatusAccepted {
		return ""
	}
	id, _ := strings.CutPrefix(c.Response().Header().Get(echo.HeaderLocation), jobPath(""))
	return id
}

// idempotencyKeyOf reads the one Idempotency-Key: 1 to 255 printable
// ASCII characters, as the IETF draft's examples and Stripe's limit.
func idempotencyKeyOf(h http.Header) (string, error) {
	vals := h.Values(idempotencyHeader)
	bad := func(format string, args ...any) error {
		return fieldError{field: idempotencyHeader, err: fmt.Errorf("%w: "+format, append([]any{errIdempotencyKey}, args...)...)}
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
