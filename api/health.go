package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/store"
)

// readyTimeout bounds the Redis write behind /readyz, so a hung Redis makes
// the probe fail rather than hang.
const readyTimeout = 2 * time.Second

// readyCacheTTL is how old a probe /readyz may answer from: any number of
// load balancers polling it cost Redis one write a second.
const readyCacheTTL = time.Second

// handleHealthz says the process is up.
//
//	@Summary	Liveness
//	@Tags		ops
//	@Produce	json
//	@Success	200	{object}	HealthResponse
//	@Router		/healthz [get]
func (s *Server) handleHealthz(c echo.Context) error {
	return c.JSON(http.StatusOK, HealthResponse{Status: "ok"})
}

// handleReadyz says the process can serve: Redis accepts a write.
//
//	@Summary		Readiness
//	@Description	200 while Redis accepts writes. 503 (store-unavailable, with Retry-After) while it is unreachable, refusing writes (out of memory, read-only, failing to persist) or not ready (loading); the detail says which. The probe is a write on a dedicated key, at most once a second.
//	@Tags			ops
//	@Produce		json
//	@Success		200	{object}	HealthResponse
//	@Failure		503	{object}	Problem	"Redis unreachable, refusing writes or not ready"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Router			/readyz [get]
func (s *Server) handleReadyz(c echo.Context) error {
	if err := s.ready.check(c.Request().Context()); err != nil {
		if errors.Is(err, store.ErrUnavailable) {
			return fmt.Errorf("api: readiness: %w", err)
		}
		return errcode.Wrap(err, errcode.Unavailable, "the data store does not answer")
	}
	return c.JSON(http.StatusOK, HealthResponse{Status: "ok"})
}

// writeProber is what readiness needs of the store.
type writeProber interface {
	ProbeWrite(ctx context.Context) error
}

// readiness runs the write probe at most once per readyCacheTTL and logs
// when Redis goes and comes back.
type readiness struct {
	st  writeProber
	log *slog.Logger

	mu   sync.Mutex // held during a probe: concurrent checks share it
	at   time.Time
	err  error
	down bool
}

func newReadiness(st writeProber, log *slog.Logger) *readiness {
	return &readiness{st: st, log: log}
}

// check returns the outcome of a probe at most readyCacheTTL old.
func (r *readiness) check(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() && time.Since(r.at) < readyCacheTTL {
		return r.err
	}
	// Detached: a caller that hangs up must not leave its context's
	// error cached as the state of Redis.
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readyTimeout)
	defer cancel()
	err := r.st.ProbeWrite(pctx)
	r.at, r.err = time.Now(), err
	switch {
	case err != nil && !r.down:
		r.log.Warn("api: readiness: redis does not accept writes", "err", err)
	case err == nil && r.down:
		r.log.Info("api: readiness: redis accepts writes again")
	}
	r.down = err != nil
	return err
}
