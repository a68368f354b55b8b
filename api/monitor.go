package api

import (
	"net/http"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/labstack/echo/v4"
)

// MonitorPath is where the queue monitor is mounted.
const MonitorPath = "/monitor"

// monitorRoutes mounts the queue monitor (asynqmon, read-only) for admin
// keys only: it shows every tenant's tasks. A Bearer header or the
// dashboard's session cookie authenticates, checked as for /v1 and /ui; a
// key that is not an admin's gets 403, and so does the open mode's keyless
// caller, who is no admin on /v1 either.
func (s *Server) monitorRoutes() {
	if s.monitor == nil {
		return
	}
	e := s.echo
	bearer := s.authenticate(s.adminOnly)
	session := s.sessionUnder(MonitorPath)(s.adminOnly)
	h := func(c echo.Context) error {
		if c.Request().Header.Get(echo.HeaderAuthorization) != "" {
			return bearer(c)
		}
		return session(c)
	}
	e.GET(MonitorPath, func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, MonitorPath+"/")
	})
	e.Any(MonitorPath+"/*", h)
}

func (s *Server) adminOnly(c echo.Context) error {
	if !principalOf(c).Admin {
		return errcode.New(errcode.Forbidden, "the queue monitor is for admin keys (benchq keys add --admin)")
	}
	if c.Request().Method != http.MethodGet && c.Request().Method != http.MethodHead {
		// Read-only as mounted; refuse before asynqmon sees it.
		return errcode.New(errcode.Forbidden, "the queue monitor is read-only")
	}
	s.monitor.ServeHTTP(c.Response(), c.Request())
	return nil
}
