package forge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/webhook"
)

// userAgent names benchq to the forges (GitHub refuses a request
// without one).
const userAgent = "benchq-forge/1"

// abuseWait is how long to wait after GitHub's secondary rate limit when
// it gives no Retry-After: "at least one minute", its documentation says.
const abuseWait = time.Minute

// ErrBadURL is returned by New for an API URL it cannot use.
var ErrBadURL = errors.New("forge: bad API URL")

// Config configures a Client. Zero values mean the documented default.
type Config struct {
	// GitHubURL and GitLabURL are the REST APIs' base URLs; zero means
	// the public forges', config.DefaultGitHubAPIURL and
	// config.DefaultGitLabAPIURL.
	GitHubURL string
	GitLabURL string
	// Dial opens every connection; nil means loopback only, as the
	// webhook client's default (tests never reach a real forge).
	Dial webhook.DialContext
	// Timeout bounds one attempt, all its requests together; zero means
	// webhook.DefaultTimeout.
	Timeout time.Duration
}

// Client sends Messages to the forges. It holds no token: each Send is
// given the one to use.
type Client struct {
	http           *http.Client
	timeout        time.Duration
	github, gitlab *url.URL
}

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = webhook.DefaultTimeout
	}
	if cfg.Dial == nil {
		p := netguard.LoopbackOnly()
		cfg.Dial = (&netguard.Dialer{Policy: p, Dialer: &net.Dialer{Control: p.Control}}).DialContext
	}
	gh, err := baseURL(cfg.GitHubURL, config.DefaultGitHubAPIURL)
	if err != nil {
		return nil, err
	}
	gl, err := baseURL(cfg.GitLabURL, config.DefaultGitLabAPIURL)
	if err != nil {
		return nil, err
	}
	return &Client{http: webhook.NewClient(cfg.Dial, cfg.Timeout), timeout: cfg.Timeout, github: gh, gitlab: gl}, nil
}

// baseURL parses an API base URL, with the trailing slash the clients
// resolve paths against.
func baseURL(raw, def string) (*url.URL, error) {
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q", ErrBadURL, raw)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// Endpoint is where m goes, for the delivery log: the status's or the
// request's comments' URL.
func (c *Client) Endpoint(m Message) string {
	switch m.Forge {
	case job.ForgeGitHub:
		if m.Comment != nil {
			return c.github.JoinPath("repos", m.Repository, "issues", strconv.Itoa(m.Request), "comments").String()
		}
		return c.github.JoinPath("repos", m.Repository, "statuses", m.SHA).String()
	case job.ForgeGitLab:
		project := url.PathEscape(m.Repository)
		if m.Comment != nil {
			return c.gitlab.String() + "projects/" + project + "/merge_requests/" + strconv.Itoa(m.Request) + "/notes"
		}
		return c.gitlab.String() + "projects/" + project + "/statuses/" + m.SHA
	}
	return ""
}

// Send makes one attempt at m with token: one request for a status; for
// a comment, the listing that finds it and the request that creates or
// updates it. The attempt says how it went as the webhook log does:
// delivered; retry (no answer, 5xx, 429, a rate limit; RetryAfterMs is the
// wait the forge asked for); or rejected (any other answer, such as a
// token refused or a repository not found, which another try would not
// change). Neither the token nor anything derived from it is in the
// attempt.
func (c *Client) Send(ctx context.Context, m Message, token string) webhook.Attempt {
	start := time.Now()
	a := webhook.Attempt{At: start.UTC(), Outcome: webhook.OutcomeRejected}
	if token == "" {
		a.Error = noTokenError(m.Forge)
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	rec := &recorder{next: c.http.Transport}
	hc := *c.http
	hc.Transport = rec
	var summary string
	var err error
	switch m.Forge {
	case job.ForgeGitHub:
		summary, err = c.sendGitHub(ctx, &hc, m, token)
	case job.ForgeGitLab:
		summary, err = c.sendGitLab(ctx, &hc, m, token)
	default:
		err = fmt.Errorf("unknown forge %q", m.Forge)
	}
	a.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	a.StatusCode = rec.status
	if err == nil {
		a.Outcome, a.Response = webhook.OutcomeDelivered, summary
		return a
	}
	var wait time.Duration
	a.Outcome, wait = classify(err, rec, time.Now())
	a.RetryAfterMs = wait.Milliseconds()
	a.Error = explain(m.Forge, err, rec.status)
	a.Response = rec.body.String()
	return a
}

func noTokenError(forge string) string {
	env := "BENCHQ_GITHUB_TOKEN"
	if forge == job.ForgeGitLab {
		env = "BENCHQ_GITLAB_TOKEN"
	}
	return fmt.Sprintf("no %s token to send it with: set %s on the workers, or the api_token of the template's %s trigger", forge, env, forge)
}

// classify judges a failed attempt: no answer, 5xx, 429 and rate limits
// are worth another try (with the wait the forge asked for, if it said);
// any other answer is not.
func classify(err error, rec *recorder, now time.Time) (webhook.Outcome, time.Duration) {
	if wait, ok := rateLimited(err, now); ok {
		return webhook.OutcomeRetry, wait
	}
	switch code := rec.status; {
	case code == 0, code >= 500, code == http.StatusTooManyRequests:
		return webhook.OutcomeRetry, rec.retryAfter(now)
	case code == http.StatusForbidden && rec.header.Get("X-RateLimit-Remaining") == "0":
		return webhook.OutcomeRetry, rec.retryAfter(now)
	case code >= 200 && code < 300:
		// Answered, but not as the client expected (a body it could not
		// read): a later try may read it.
		return webhook.OutcomeRetry, 0
	}
	return webhook.OutcomeRejected, 0
}

// explain words a failed attempt for the delivery log: the client's error
// and, for the answers a person can fix, what to check.
func explain(forge string, err error, code int) string {
	msg := err.Error()
	switch code {
	case http.StatusUnauthorized:
		msg += fmt.Sprintf(" (the %s token was refused: check it)", forge)
	case http.StatusNotFound:
		msg += " (the repository, commit or request does not exist, or the token cannot see it)"
	case http.StatusForbidden:
		msg += " (the token may not write statuses or comments of this repository)"
	}
	return msg
}

// recorder is the transport of one attempt: it keeps the last answer's
// status, headers and the first webhook.MaxLoggedBody bytes of its body,
// whichever client library read it.
type recorder struct {
	next   http.RoundTripper
	status int
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.status, r.header = 0, nil
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	r.status, r.header = resp.StatusCode, resp.Header
	r.body.Reset()
	resp.Body = &teeBody{ReadCloser: resp.Body, keep: &r.body}
	return resp, nil
}

// teeBody copies what is read of a body into keep, up to
// webhook.MaxLoggedBody bytes.
type teeBody struct {
	io.ReadCloser
	keep *bytes.Buffer
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if room := webhook.MaxLoggedBody - t.keep.Len(); room > 0 && n > 0 {
		t.keep.Write(p[:min(n, room)])
	}
	return n, err
}

// retryAfter is the wait the last answer asked for: Retry-After, else,
// with no requests left, until X-RateLimit-Reset (GitHub: Unix seconds)
// or RateLimit-Reset (GitLab: the same).
func (r *recorder) retryAfter(now time.Time) time.Duration {
	if r.header == nil {
		return 0
	}
	if d, ok := webhook.RetryAfter(r.header.Get("Retry-After"), now); ok {
		return d
	}
	for _, h := range []string{"X-RateLimit-Reset", "RateLimit-Reset"} {
		if reset, err := strconv.ParseInt(r.header.Get(h), 10, 64); err == nil && reset > 0 {
			return max(time.Unix(reset, 0).Sub(now), time.Second)
		}
	}
	return 0
}
