package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/dashboard"
	"github.com/benchq/benchq/internal/errcode"
)

// sessionCookie holds the API key a browser signed in with. It is a
// session cookie (no Expires: gone when the browser session ends),
// HttpOnly (no script reads it), SameSite=Strict (no other site's page
// sends it) and Secure over TLS. Each request is authenticated by the same
// apikey lookup as a Bearer header, so a revoked key ends the session on
// its next request and there is no second session store to keep in step.
const sessionCookie = "benchq_session"

// uiOpen are the dashboard paths served without a session: the sign-in
// page and the assets it needs.
func uiOpen(path string) bool {
	return path == dashboard.Prefix+"/signin" || strings.HasPrefix(path, dashboard.Prefix+"/static/")
}

// uiRoutes mounts the dashboard: its pages through the dashboard package,
// the event stream through the same SSE handler as /v1, and the sign-in
// and sign-out, which set and clear the session cookie, here.
func (s *Server) uiRoutes() {
	e := s.echo
	d, err := dashboard.New(dashboard.Config{API: s.echo, Log: s.log, Monitor: s.monitor != nil})
	if err != nil {
		// The templates are embedded: a parse error is a build defect.
		panic(fmt.Sprintf("api: dashboard: %v", err))
	}
	s.dashboard = d
	e.Use(s.sessionUnder(dashboard.Prefix))
	e.GET(dashboard.Prefix, func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, dashboard.Prefix+"/")
	})
	e.GET(dashboard.Prefix+"/jobs/:id/events", s.handleJobEvents)
	e.POST(dashboard.Prefix+"/signin", s.handleSignIn)
	e.POST(dashboard.Prefix+"/signout", s.handleSignOut)
	e.Any(dashboard.Prefix+"/*", s.handleDashboard)
}

func (s *Server) handleDashboard(c echo.Context) error {
	p := principalOf(c)
	r := c.Request()
	if p.KeyID != "" || !uiOpen(r.URL.Path) {
		key := ""
		if ck, err := r.Cookie(sessionCookie); err == nil {
			key = ck.Value
		}
		keyID := p.KeyID
		if keyID == anonymousOwner {
			keyID = ""
		}
		r = dashboard.WithCaller(r, key, keyID, p.Admin)
	}
	s.dashboard.ServeHTTP(c.Response(), r.WithContext(context.WithValue(r.Context(), dashboardCall{}, true)))
	return nil
}

// dashboardCall marks the context of a dashboard page's request. The
// dashboard's calls to the API run in process with that context, so a
// job its form creates is known to come from the dashboard (sourceOf);
// no request from the network carries it.
type dashboardCall struct{}

// sourceOf is what started a creation a request carries: via, or the
// dashboard when one of its pages sent the request in process.
func sourceOf(c echo.Context, via admit.Via) admit.Source {
	if from, _ := c.Request().Context().Value(dashboardCall{}).(bool); from {
		via = admit.ViaDashboard
	}
	return admit.Source{Via: via, RequestID: requestID(c)}
}

// sessionUnder authenticates every dashboard request but the sign-in page
// and its assets: a valid session cookie, or none while the open mode
// holds (as /v1 admits a keyless request then). A page request without a
// session goes to the sign-in page; the event stream answers 401.
// Every POST must also come from a dashboard page (sameOrigin): the
// cookie's SameSite=Strict already keeps other sites' forms from carrying
// it, and the Origin check covers browsers that ignore SameSite.
func (s *Server) sessionUnder(prefix string) echo.MiddlewareFunc {
	under := func(p string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if !under(r.URL.Path) && !under(c.Path()) {
				return next(c)
			}
			if r.Method == http.MethodPost && !sameOrigin(r) {
				return errcode.New(errcode.Forbidden, "this form must be sent from a benchq dashboard page")
			}
			if r.URL.Path == prefix+"/signin" || r.URL.Path == prefix+"/signout" {
				return next(c)
			}
			ck, err := r.Cookie(sessionCookie)
			if err != nil || ck.Value == "" {
				open, err := s.auth.openNow(r.Context())
				if err != nil {
					return fmt.Errorf("api: count api keys: %w", err)
				}
				if open {
					c.Set(principalKey, admit.Caller{KeyID: anonymousOwner})
					return next(c)
				}
				if uiOpen(r.URL.Path) {
					return next(c)
				}
				return s.toSignIn(c, "")
			}
			k, err := s.auth.lookup(r.Context(), ck.Value)
			switch {
			case errors.Is(err, apikey.ErrRevoked):
				return s.toSignIn(c, "revoked")
			case errors.Is(err, apikey.ErrUnknown):
				return s.toSignIn(c, "unknown")
			case err != nil:
				return fmt.Errorf("api: look up api key: %w", err)
			}
			c.Set(principalKey, admit.CallerOf(k))
			return next(c)
		}
	}
}

// toSignIn ends a session that cannot go on and sends the browser to the
// sign-in page; the event stream, which a browser does not follow to a
// page, gets a 401.
func (s *Server) toSignIn(c echo.Context, why string) error {
	r := c.Request()
	if why != "" {
		clearSession(c)
	}
	if strings.HasSuffix(r.URL.Path, "/events") || r.Method != http.MethodGet {
		return unauthorized(c, "invalid_token", "sign in to the dashboard again")
	}
	q := url.Values{"next": {r.URL.RequestURI()}}
	if why != "" {
		q.Set("why", why)
	}
	return c.Redirect(http.StatusSeeOther, dashboard.Prefix+"/signin?"+q.Encode())
}

// handleSignIn checks the key typed into the sign-in form with the same
// lookup as a Bearer header and keeps it in the session cookie.
func (s *Server) handleSignIn(c echo.Context) error {
	r := c.Request()
	key := strings.TrimSpace(r.PostFormValue("key"))
	_, err := s.auth.lookup(r.Context(), key)
	switch {
	case key == "":
		s.dashboard.SignInPage(c.Response(), r, http.StatusUnauthorized, "Enter an API key.")
		return nil
	case errors.Is(err, apikey.ErrRevoked):
		s.dashboard.SignInPage(c.Response(), r, http.StatusUnauthorized, "That API key was revoked.")
		return nil
	case errors.Is(err, apikey.ErrUnknown):
		s.dashboard.SignInPage(c.Response(), r, http.StatusUnauthorized, "That is not a valid API key.")
		return nil
	case err != nil:
		return fmt.Errorf("api: look up api key: %w", err)
	}
	http.SetCookie(c.Response(), &http.Cookie{
		Name: sessionCookie, Value: key, Path: "/", HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
	next := r.PostFormValue("next")
	if !strings.HasPrefix(next, dashboard.Prefix+"/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		next = dashboard.Prefix + "/"
	}
	return c.Redirect(http.StatusSeeOther, next)
}

func (s *Server) handleSignOut(c echo.Context) error {
	clearSession(c)
	return c.Redirect(http.StatusSeeOther, dashboard.Prefix+"/signin")
}

func clearSession(c echo.Context) {
	http.SetCookie(c.Response(), &http.Cookie{
		Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: c.Request().TLS != nil, SameSite: http.SameSiteStrictMode,
	})
}

// sameOrigin reports whether a request was sent by a page of this server:
// its Origin, or without one its Referer, names the host it was sent to.
// A request with neither is refused: every browser that submits a form
// sends at least one of them.
func sameOrigin(r *http.Request) bool {
	from := r.Header.Get("Origin")
	if from == "" || from == "null" {
		from = r.Header.Get("Referer")
	}
	return from != "" && originIs(from, r.Host)
}
