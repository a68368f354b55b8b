package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/admit"
	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/errcode"
)

// KeyStore finds API keys; *store.Store implements it.
type KeyStore interface {
	apikey.KeyFinder
	// KeyCount counts every key ever created, revoked ones included: the
	// open mode ends with the first key for good, so revoking the last
	// key must not open the API again.
	KeyCount(ctx context.Context) (int64, error)
}

// keyCountTTL bounds how stale the open mode's "no key exists" may be: a
// key added with `benchq keys add` closes the open mode within it.
const keyCountTTL = time.Second

// authState decides who a request is.
type authState struct {
	keys KeyStore
	// open is whether keyless requests may still be admitted: only with
	// Config.OpenUntilFirstKey, on a loopback listener, and until a key is
	// seen to exist. Once cleared it is never set again.
	open atomic.Bool

	mu        sync.Mutex
	countedAt time.Time
	count     int64
}

func newAuthState(openUntilFirstKey bool, keys KeyStore) *authState {
	a := &authState{keys: keys}
	a.open.Store(openUntilFirstKey)
	return a
}

// authenticateUnder applies authenticate to every request routed to, or
// addressed to, a path under prefix. It is router-level rather than group
// middleware because echo's group middleware turns 405s into 404s, and it
// looks at the matched route as well as the URL so that no spelling of a
// URL can reach a /v1 handler unchecked. Routes under except (matched
// by route, not by URL) authenticate themselves.
func (s *Server) authenticateUnder(prefix string, except ...string) echo.MiddlewareFunc {
	within := func(p, prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
	exempt := func(c echo.Context) bool {
		for _, e := range except {
			if within(c.Path(), e) && within(c.Request().URL.Path, e) {
				return true
			}
		}
		return false
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		checked := s.authenticate(next)
		return func(c echo.Context) error {
			if exempt(c) {
				return next(c)
			}
			if within(c.Path(), prefix) || within(c.Request().URL.Path, prefix) {
				return checked(c)
			}
			return next(c)
		}
	}
}

// authenticate is the /v1 middleware: it admits a valid key, or a keyless
// request while the open mode holds, and answers 401 otherwise. A request
// that carries an Authorization header is always checked, open mode or not.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx := c.Request().Context()
		header := c.Request().Header.Get(echo.HeaderAuthorization)
		if header == "" {
			open, err := s.auth.openNow(ctx)
			if err != nil {
				return fmt.Errorf("api: count api keys: %w", err)
			}
			if !open {
				return unauthorized(c, "", "an API key is required: send Authorization: Bearer <key>")
			}
			if err := refuseCrossSite(c.Request()); err != nil {
				return err // crosssite.go: no web page elsewhere acts as the keyless caller
			}
			c.Set(principalKey, admit.Caller{KeyID: anonymousOwner})
			return next(c)
		}
		scheme, token, _ := strings.Cut(header, " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return unauthorized(c, "invalid_request", "the Authorization header must be Bearer <key>")
		}
		k, err := s.auth.lookup(ctx, token)
		switch {
		case errors.Is(err, apikey.ErrRevoked):
			return unauthorized(c, "invalid_token", "the API key was revoked")
		case errors.Is(err, apikey.ErrUnknown):
			return unauthorized(c, "invalid_token", "the API key is not valid")
		case err != nil:
			return fmt.Errorf("api: look up api key: %w", err)
		}
		c.Set(principalKey, admit.CallerOf(k))
		return next(c)
	}
}

// unauthorized answers 401 with the RFC 6750 challenge.
func unauthorized(c echo.Context, code, msg string) error {
	challenge := `Bearer realm="benchq"`
	if code != "" {
		challenge += `, error="` + code + `"`
	}
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, challenge)
	return errcode.Newf(errcode.Unauthorized, "%s", msg)
}

func (a *authState) lookup(ctx context.Context, token string) (apikey.Key, error) {
	if a.keys == nil {
		return apikey.Key{}, apikey.ErrUnknown
	}
	return apikey.Authenticate(ctx, a.keys, token)
}

// openNow reports whether a keyless request is admitted now: in the
// all-in-one open mode, on loopback, while no key was ever created.
func (a *authState) openNow(ctx context.Context) (bool, error) {
	if !a.open.Load() {
		return false, nil
	}
	n, err := a.keyCount(ctx)
	if err != nil {
		return false, err
	}
	if n > 0 {
		a.open.Store(false) // for good: a revoked key still counts
		return false, nil
	}
	return true, nil
}

// keyCount is the number of keys ever created, at most keyCountTTL old,
// so the open mode costs no Redis round trip per request.
func (a *authState) keyCount(ctx context.Context) (int64, error) {
	if a.keys == nil {
		return 0, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.countedAt.IsZero() && time.Since(a.countedAt) < keyCountTTL {
		return a.count, nil
	}
	n, err := a.keys.KeyCount(ctx)
	if err != nil {
		return 0, err
	}
	a.count, a.countedAt = n, time.Now()
	return n, nil
}

// listening fixes the mode for the listener's address and logs the one
// line that says which mode is in force.
func (a *authState) listening(addr net.Addr, log *slog.Logger) {
	wanted := a.open.Load()
	if !isLoopback(addr) {
		a.open.Store(false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := a.keyCount(ctx)
	open, _ := a.openNow(ctx) // within keyCountTTL: the count just read
	switch {
	case !wanted:
		log.Info("benchq: auth keys: every /v1 request needs an API key", "keys", n)
	case !isLoopback(addr):
		log.Info("benchq: auth keys: listening beyond loopback, so every /v1 request needs an API key", "addr", addr.String(), "keys", n)
	case err != nil:
		log.Warn("benchq: auth: cannot count API keys; requests without a key are refused until Redis answers", "err", err)
	case open:
		log.Warn("benchq: auth open: no API key was ever created, listening on loopback only; requests without a key are admitted until one is added (benchq keys add)", "addr", addr.String())
	default:
		log.Info("benchq: auth keys: an API key was created, so every /v1 request needs one", "keys", n)
	}
	if !open && err == nil && n == 0 {
		log.Warn("benchq: auth: no API key exists yet; every /v1 request is refused until one is added (benchq keys add)")
	}
}

// isLoopback reports whether a listener only accepts loopback connections.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
