package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// readyTimeout bounds the Redis ping behind /readyz, so a hung Redis makes
// the probe fail rather than hang.
const readyTimeout = 2 * time.Second

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

// handleReadyz says the process can serve: Redis answers.
//
//	@Summary	Readiness
//	@Tags		ops
//	@Produce	json
//	@Success	200	{object}	HealthResponse
//	@Failure	503	{object}	Problem	"Redis unreachable"
//	@Router		/readyz [get]
func (s *Server) handleReadyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.Warn("api: readiness: redis ping failed", "err", err)
		return fmt.Errorf("%w: redis: %v", errUnavailable, err)
	}
	return c.JSON(http.StatusOK, HealthResponse{Status: "ok"})
}
