package targetverify

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/store"
)

// ErrUnverified is wrapped by CheckSpec when a target's host does not
// serve its token; the error also wraps a *job.ValidationError naming each
// target field, with the URL to publish the token at.
var ErrUnverified = errors.New("targetverify: target host not verified")

// Defaults of Config.
const (
	DefaultTimeout = 5 * time.Second
	DefaultMaxBody = 4 << 10
)

// Store keeps each key's tokens and check outcomes; *store.Store
// implements it.
type Store interface {
	EnsureTargetHost(ctx context.Context, owner string, fresh store.TargetHost) (store.TargetHost, error)
	SaveTargetCheck(ctx context.Context, owner string, th store.TargetHost) error
	TargetHosts(ctx context.Context, owner string) ([]store.TargetHost, error)
}

// DialContext opens one connection, as net.Dialer.DialContext does.
type DialContext func(ctx context.Context, network, address string) (net.Conn, error)

// Config tunes a Verifier. Zero values mean the documented default.
type Config struct {
	// Dial opens the connection of every fetch: the fetch is a request to
	// the target host, so the address policy applies to it as to the load.
	// Nil means netguard's loopback-only dialer.
	Dial DialContext
	// Timeout bounds one fetch, connect to last byte; zero means 5s.
	Timeout time.Duration
	// MaxBody is how much of the file is read looking for the token; zero
	// means 4 KiB.
	MaxBody int64
}

// Verifier creates tokens and checks that hosts serve them. A host
// serves its token when the file's body holds it on a line of its own.
type Verifier struct {
	st      Store
	client  *http.Client
	maxBody int64
	now     func() time.Time
}

// New returns a Verifier keeping its state in st.
func New(st Store, cfg Config) *Verifier {
	if cfg.Dial == nil {
		cfg.Dial = (&netguard.Dialer{Policy: netguard.LoopbackOnly()}).DialContext
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	tr := &http.Transport{
		Proxy:       nil, // a proxy would be dialed instead of the target, past the policy
		DialContext: cfg.Dial,
		// The load engine does not verify certificates either (as ab):
		// what the token proves is control of the address the load goes
		// to, and the policy dialer already pins that address.
		TLSClientConfig:        &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 16 << 10,
		ResponseHeaderTimeout:  cfg.Timeout,
	}
	client := &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return &Verifier{st: st, client: client, maxBody: cfg.MaxBody, now: time.Now}
}

// Path is where a host publishes token.
func Path(token string) string { return "/benchq-verify-" + token + ".txt" }

// HostKey names the host of u as tokens are kept: lower-case host and
// explicit port ("127.0.0.1:8081", "[::1]:443", "example.com:80").
func HostKey(u *url.URL) (string, error) {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", fmt.Errorf("targetverify: %q has no host", u.Redacted())
	}
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		default:
			return "", fmt.Errorf("targetverify: scheme %q is not http or https", u.Scheme)
		}
	}
	return net.JoinHostPort(host, port), nil
}

// Verify gives owner a token for u's host (the one it has, or a new one)
// and checks that the host serves it now. The outcome is stored and
// returned; an unverified host is not an error, only a failure to store is.
func (v *Verifier) Verify(ctx context.Context, owner string, u *url.URL) (store.TargetHost, error) {
	key, err := HostKey(u)
	if err != nil {
		return store.TargetHost{}, err
	}
	token, err := newToken()
	if err != nil {
		return store.TargetHost{}, err
	}
	th, err := v.st.EnsureTargetHost(ctx, owner, store.TargetHost{Host: key, Token: token, CreatedAt: v.now().UTC()})
	if err != nil {
		return store.TargetHost{}, fmt.Errorf("targetverify: %w", err)
	}
	th.Verified, th.Detail = v.fetch(ctx, fileURL(u.Scheme, key, th.Token), th.Token)
	th.CheckedAt = v.now().UTC()
	if err := v.st.SaveTargetCheck(ctx, owner, th); err != nil {
		return store.TargetHost{}, fmt.Errorf("targetverify: %w", err)
	}
	return th, nil
}

// List returns owner's hosts and their last check.
func (v *Verifier) List(ctx context.Context, owner string) ([]store.TargetHost, error) {
	hosts, err := v.st.TargetHosts(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("targetverify: %w", err)
	}
	return hosts, nil
}

// CheckSpec verifies the host of every target URL for owner, fetching
// each host's file once. It returns an error wrapping ErrUnverified and a
// *job.ValidationError naming each unverified target's field and the URL
// to publish its token at; any other error is the store's.
func (v *Verifier) CheckSpec(ctx context.Context, owner string, targets []job.TargetURL) error {
	type outcome struct {
		th  store.TargetHost
		err error
	}
	seen := map[string]outcome{}
	var problems []job.FieldError
	for _, t := range targets {
		u, err := url.Parse(t.URL)
		if err != nil {
			problems = append(problems, job.FieldError{Field: t.Field, Message: fmt.Sprintf("not a URL: %v", err)})
			continue
		}
		origin := strings.ToLower(u.Scheme) + "://" + u.Host
		o, ok := seen[origin]
		if !ok {
			o.th, o.err = v.Verify(ctx, owner, u)
			seen[origin] = o
		}
		if o.err != nil {
			return o.err
		}
		if !o.th.Verified {
			problems = append(problems, job.FieldError{Field: t.Field, Message: unverifiedMessage(u.Scheme, o.th)})
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUnverified, &job.ValidationError{Problems: problems})
}

func unverifiedMessage(scheme string, th store.TargetHost) string {
	return fmt.Sprintf("host %s is not verified for this API key (%s): serve a file at %s whose body is the line %s",
		th.Host, th.Detail, fileURL(scheme, th.Host, th.Token), th.Token)
}

func fileURL(scheme, hostKey, token string) string {
	return strings.ToLower(scheme) + "://" + hostKey + Path(token)
}

// fetch reports whether the file at target contains token, and what it
// found. Failures of the host are outcomes, not errors.
func (v *Verifier) fetch(ctx context.Context, target, token string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false, fmt.Sprintf("cannot request %s: %v", target, err)
	}
	req.Header.Set("User-Agent", "benchq-verify")
	resp, err := v.client.Do(req)
	if err != nil {
		return false, fmt.Sprintf("fetching %s failed: %v", target, unwrapURLError(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return false, fmt.Sprintf("%s answered %s to %q; redirects are not followed, the host itself must serve the file",
			target, resp.Status, resp.Header.Get("Location"))
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Sprintf("%s answered %s, want 200", target, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, v.maxBody))
	if err != nil {
		return false, fmt.Sprintf("reading %s failed: %v", target, err)
	}
	if !hasLine(string(body), token) {
		return false, fmt.Sprintf("the first %d bytes of %s do not hold the token on a line of its own", v.maxBody, target)
	}
	return true, fmt.Sprintf("%s serves the token", target)
}

// hasLine reports whether token is a line of body, spaces aside. A mere
// substring would let a server that echoes the request path in a 200
// page ("no such page: /benchq-verify-<token>.txt") vouch for itself.
func hasLine(body, token string) bool {
	for line := range strings.Lines(body) {
		if strings.TrimSpace(line) == token {
			return true
		}
	}
	return false
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// newToken returns 128 random bits in hex: unguessable, so a host cannot
// publish a key's token before the key holder hands it out.
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("targetverify: token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
