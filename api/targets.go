package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
)

// TargetVerifier manages target host tokens; *targetverify.Verifier
// implements it.
type TargetVerifier interface {
	Verify(ctx context.Context, owner string, u *url.URL) (store.TargetHost, error)
	List(ctx context.Context, owner string) ([]store.TargetHost, error)
	CheckSpec(ctx context.Context, owner string, targets []job.TargetURL) error
}

// Errors of the target endpoints.
var (
	errNoTargetsVerifier = errors.New("api: target verification is not configured")
)

// maxVerifyBody caps POST /v1/targets/verify: one URL.
const maxVerifyBody = 8 << 10

// VerifyTargetRequest names the target whose host to verify.
type VerifyTargetRequest struct {
	URL string `json:"url" example:"http://127.0.0.1:8081/"`
}

// TargetHostResponse is one host's verification state for the caller's
// key: the token to publish, where, and the outcome of the last check.
type TargetHostResponse struct {
	Host      string    `json:"host" example:"127.0.0.1:8081"`
	Token     string    `json:"token" example:"6f1c0e8d4b2a49d7a3e5f9c1b7d3e2a0"`
	Path      string    `json:"path" example:"/benchq-verify-6f1c0e8d4b2a49d7a3e5f9c1b7d3e2a0.txt"`
	Verified  bool      `json:"verified"`
	CheckedAt time.Time `json:"checked_at,omitzero"`
	Detail    string    `json:"detail,omitempty"`
}

// ListTargetsResponse lists the caller's hosts, sorted by host.
type ListTargetsResponse struct {
	Targets []TargetHostResponse `json:"targets"`
}

func newTargetHostResponse(th store.TargetHost) TargetHostResponse {
	return TargetHostResponse{Host: th.Host, Token: th.Token, Path: targetverify.Path(th.Token),
		Verified: th.Verified, CheckedAt: th.CheckedAt, Detail: th.Detail}
}

// handleVerifyTarget gives the caller a token for a host and checks it.
//
//	@Summary		Verify a target host
//	@Description	Creates the caller's token for the URL's host (host and port) if it has none, then fetches {scheme}://{host}/benchq-verify-{token}.txt, without following redirects. The host is verified when the body holds the token on a line of its own. With verification on, jobs may only target verified hosts.
//	@Tags			targets
//	@Accept			json
//	@Produce		json
//	@Param			request	body		VerifyTargetRequest	true	"a URL on the host to verify"
//	@Success		200		{object}	TargetHostResponse	"the token, where to publish it, and whether the host serves it now"
//	@Failure		400		{object}	Problem				"malformed JSON"
//	@Failure		401		{object}	Problem				"no valid API key"
//	@Failure		422		{object}	Problem				"not an http(s) URL, refused by the address policy, or its host does not resolve (field url)"
//	@Failure		429		{object}	Problem				"over the key's submissions per minute, which verifications share with job submissions; Retry-After header"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable or refusing writes; retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/targets/verify [post]
func (s *Server) handleVerifyTarget(c echo.Context) error {
	if s.targets == nil {
		return errcode.Wrap(errNoTargetsVerifier, errcode.Unavailable, "target verification is not configured on this server")
	}
	var req VerifyTargetRequest
	if err := readBody(c, maxVerifyBody, &req); err != nil { // body.go
		return err
	}
	if err := s.admit.ChargeSubmission(c.Request().Context(), principalOf(c)); err != nil { // the check resolves and fetches; rate it first, with job submissions
		return err
	}
	u, err := s.checkTargetURL(c, req.URL)
	if err != nil {
		return err
	}
	th, err := s.targets.Verify(c.Request().Context(), principalOf(c).KeyID, u)
	if err != nil {
		return fmt.Errorf("api: verify target: %w", err)
	}
	return c.JSON(http.StatusOK, newTargetHostResponse(th))
}

// checkTargetURL parses a target URL and applies the address policy to
// it: the verification fetch is itself a request to that host. A refusal
// shows the URL without its user:password@ (url.Parse's own error text
// would repeat it), and the URL returned has none: the verification
// fetch needs only the host.
func (s *Server) checkTargetURL(c echo.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	var why string // what the client reads after the URL
	var ue *url.Error
	switch {
	case errors.As(err, &ue):
		why = ue.Err.Error() // net/url's words, without the URL they repeat
	case err != nil:
		why = "not a URL"
	case u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "":
		why = "want an http or https URL with a host"
	default:
		if err = s.cfg.urlChecker(c.Request().Context())(u); err != nil {
			why = job.URLProblem(err)
		}
	}
	if why != "" {
		return nil, errcode.Wrapf(err, errcode.InvalidTarget, "invalid target URL %q: %s", job.RedactURL(raw), why).WithField("url")
	}
	u.User = nil
	return u, nil
}

// urlChecker is the address policy for the URLs of one request.
func (c Config) urlChecker(ctx context.Context) job.URLChecker {
	if c.CheckURLs != nil {
		return c.CheckURLs(ctx)
	}
	return c.CheckURL
}

// handleListTargets lists the caller's hosts and their last check.
//
//	@Summary		List target hosts
//	@Description	Every host the caller's key has a token for, with the outcome of its last check.
//	@Tags			targets
//	@Produce		json
//	@Success		200	{object}	ListTargetsResponse
//	@Failure		401	{object}	Problem	"no valid API key"
//	@Failure		503	{object}	Problem	"store-unavailable: Redis unreachable (reads are served while it refuses writes); retry after the Retry-After header"
//	@Header			503	{integer}	Retry-After	"seconds"
//	@Security		BearerAuth
//	@Router			/v1/targets [get]
func (s *Server) handleListTargets(c echo.Context) error {
	if s.targets == nil {
		return errcode.Wrap(errNoTargetsVerifier, errcode.Unavailable, "target verification is not configured on this server")
	}
	hosts, err := s.targets.List(c.Request().Context(), principalOf(c).KeyID)
	if err != nil {
		return fmt.Errorf("api: list targets: %w", err)
	}
	out := ListTargetsResponse{Targets: make([]TargetHostResponse, 0, len(hosts))}
	for _, th := range hosts {
		out.Targets = append(out.Targets, newTargetHostResponse(th))
	}
	return c.JSON(http.StatusOK, out)
}
