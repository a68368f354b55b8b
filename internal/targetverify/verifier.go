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
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/store"
)

// Errors of CheckSpec and VerifySpec. Each also wraps an invalid-spec
// error naming the spec fields at fault (errors.Is job.ErrInvalid holds
// for all three).
var (
	// ErrUnverified: a target's host does not serve its token; the
	// problems name the URL to publish the token at.
	ErrUnverified = errcode.Sentinel(errcode.TargetUnverified, "a target host is not verified")
	// ErrHostHeader: a target's requests carry a Host header naming
	// another host than its URL. The load engine sends it as given and
	// uses it as the TLS server name, so a shared front end (a CDN, a
	// reverse proxy) would route the load to the host the header names,
	// which nobody verified.
	ErrHostHeader = errors.New("targetverify: Host header names an unverified host")
	// ErrTooManyHosts: a spec names more distinct hosts than one check
	// may fetch from.
	ErrTooManyHosts = errors.New("targetverify: too many target hosts")
)

// Defaults of Config.
const (
	DefaultTimeout  = 5 * time.Second
	DefaultMaxBody  = 4 << 10
	DefaultMaxHosts = 16
	DefaultDeadline = 20 * time.Second
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
	// MaxHosts caps the distinct hosts (scheme, host and port) of one
	// spec: each is an outbound fetch made on a client's request, and a
	// 1 MiB spec could otherwise list thousands. Zero means 16.
	MaxHosts int
	// Deadline bounds all the fetches of one spec together; hosts not
	// reached by then are unverified. Zero means 20s.
	Deadline time.Duration
}

// Verifier creates tokens and checks that hosts serve them. A host
// serves its token when the file's body holds it on a line of its own.
type Verifier struct {
	st       Store
	client   *http.Client
	maxBody  int64
	maxHosts int
	deadline time.Duration
	now      func() time.Time
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
	if cfg.MaxHosts <= 0 {
		cfg.MaxHosts = DefaultMaxHosts
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
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
	return &Verifier{st: st, client: client, maxBody: cfg.MaxBody, maxHosts: cfg.MaxHosts,
		deadline: cfg.Deadline, now: time.Now}
}

// Path is where a host publishes token.
func Path(token string) string { return "/benchq-verify-" + token + ".txt" }

// HostKey names the host of u as tokens are kept: lower-case host and
// explicit port ("127.0.0.1:8081", "[::1]:443", "example.com:80").
func HostKey(u *url.URL) (string, error) {
	key, err := netguard.URLHostPort(u) // the key of the load's pins
	if err != nil {
		return "", fmt.Errorf("targetverify: %w", err)
	}
	return key, nil
}

// Verify gives owner a token for u's host (the one it has, or a new one)
// and checks that the host serves it now. The outcome is stored and
// returned; an unverified host is not an error, only a failure to store is.
func (v *Verifier) Verify(ctx context.Context, owner string, u *url.URL) (store.TargetHost, error) {
	th, _, err := v.verify(ctx, ctx, owner, u)
	return th, err
}

// verify is Verify with the fetch bounded by fetchCtx alone, so a spec's
// deadline running out still lets the outcome be stored. It also returns
// the IP that served the token, when one did.
func (v *Verifier) verify(ctx, fetchCtx context.Context, owner string, u *url.URL) (store.TargetHost, netip.Addr, error) {
	key, err := HostKey(u)
	if err != nil {
		return store.TargetHost{}, netip.Addr{}, err
	}
	token, err := newToken()
	if err != nil {
		return store.TargetHost{}, netip.Addr{}, err
	}
	th, err := v.st.EnsureTargetHost(ctx, owner, store.TargetHost{Host: key, Token: token, CreatedAt: v.now().UTC()})
	if err != nil {
		return store.TargetHost{}, netip.Addr{}, fmt.Errorf("targetverify: %w", err)
	}
	var ip netip.Addr
	th.Verified, th.Detail, ip = v.fetch(fetchCtx, fileURL(u.Scheme, key, th.Token), th.Token)
	th.CheckedAt = v.now().UTC()
	if err := v.st.SaveTargetCheck(ctx, owner, th); err != nil {
		return store.TargetHost{}, netip.Addr{}, fmt.Errorf("targetverify: %w", err)
	}
	return th, ip, nil
}

// List returns owner's hosts and their last check.
func (v *Verifier) List(ctx context.Context, owner string) ([]store.TargetHost, error) {
	hosts, err := v.st.TargetHosts(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("targetverify: %w", err)
	}
	return hosts, nil
}

// CheckSpec is VerifySpec for the API, which sends no load and so needs
// no pins.
func (v *Verifier) CheckSpec(ctx context.Context, owner string, targets []job.TargetURL) error {
	_, err := v.VerifySpec(ctx, owner, targets)
	return err
}

// VerifySpec verifies the host of every target URL for owner, fetching
// each host's file once, and returns the IP each host:port served its
// token from: the load must go there and nowhere else (netguard.WithPins),
// since the name may resolve elsewhere by the time it is sent.
//
// Before fetching anything it refuses a Host header naming another host
// than its URL (ErrHostHeader) and more than Config.MaxHosts distinct
// hosts (ErrTooManyHosts). A host that does not serve its token, or that
// the spec's Deadline leaves unchecked, is ErrUnverified. Each of these
// wraps a *errcode.Error naming the fields; any other error is the
// store's.
func (v *Verifier) VerifySpec(ctx context.Context, owner string, targets []job.TargetURL) (netguard.Pins, error) {
	urls, err := v.screen(targets)
	if err != nil {
		return nil, err
	}
	fetchCtx, cancel := context.WithTimeout(ctx, v.deadline)
	defer cancel()
	type outcome struct {
		th store.TargetHost
		ip netip.Addr
	}
	seen := map[string]outcome{}
	pins := netguard.Pins{}
	var problems []job.FieldError
	for i, t := range targets {
		u := urls[i]
		origin := strings.ToLower(u.Scheme) + "://" + u.Host
		o, ok := seen[origin]
		if !ok {
			if fetchCtx.Err() != nil {
				problems = append(problems, job.FieldError{Field: t.Field, Message: fmt.Sprintf(
					"host %s was not checked: verifying this job's hosts may take %v in all", u.Host, v.deadline)})
				continue
			}
			o.th, o.ip, err = v.verify(ctx, fetchCtx, owner, u)
			if err != nil {
				return nil, err
			}
			seen[origin] = o
		}
		if !o.th.Verified {
			problems = append(problems, job.FieldError{Field: t.Field, Message: unverifiedMessage(u.Scheme, o.th)})
			continue
		}
		pins.Add(o.th.Host, o.ip)
	}
	if len(problems) > 0 {
		return nil, unverified(problems)
	}
	return pins, nil
}

// screen parses the target URLs and refuses, with no request sent, what
// verification cannot vouch for: Host headers naming other hosts, and
// more distinct hosts than one check may fetch from.
func (v *Verifier) screen(targets []job.TargetURL) ([]*url.URL, error) {
	urls := make([]*url.URL, len(targets))
	var bad, hostHeaders []job.FieldError
	origins := map[string]bool{}
	reported := map[string]bool{} // a Host header shared by many URLs is one problem
	for i, t := range targets {
		u, err := url.Parse(t.URL)
		if err == nil {
			_, err = HostKey(u)
		}
		if err != nil {
			bad = append(bad, job.FieldError{Field: t.Field, Message: fmt.Sprintf("not a target URL: %v", err)})
			continue
		}
		urls[i] = u
		for _, h := range t.HostHeaders {
			if !reported[h.Field] && !sameHost(u, h.Value) {
				reported[h.Field] = true
				hostHeaders = append(hostHeaders, job.FieldError{Field: h.Field, Message: fmt.Sprintf(
					"Host header %q names another host than %s: with target verification on, requests may only name the verified host of their URL",
					h.Value, u.Host)})
			}
		}
		origin := strings.ToLower(u.Scheme) + "://" + u.Host
		if !origins[origin] && len(origins) == v.maxHosts {
			return nil, fmt.Errorf("%w: %w", ErrTooManyHosts, job.Invalid([]job.FieldError{{
				Field: t.Field, Message: fmt.Sprintf("%s is host number %d; with target verification on, a job may send load to at most %d distinct hosts",
					u.Host, v.maxHosts+1, v.maxHosts)}}))
		}
		origins[origin] = true
	}
	switch {
	case len(bad) > 0: // Validate refuses these first; here only by misuse
		return nil, fmt.Errorf("targetverify: %w", job.Invalid(bad))
	case len(hostHeaders) > 0:
		return nil, fmt.Errorf("%w: %w", ErrHostHeader, job.Invalid(hostHeaders))
	}
	return urls, nil
}

// sameHost reports whether a Host header value names u's host, and u's
// port if it gives one.
func sameHost(u *url.URL, header string) bool {
	want, err := HostKey(u)
	if err != nil {
		return false
	}
	host, port, err := net.SplitHostPort(header)
	if err != nil { // no port
		host, port = strings.TrimSuffix(strings.TrimPrefix(header, "["), "]"), ""
	}
	if port == "" {
		_, port, _ = net.SplitHostPort(want)
	}
	return netguard.HostPort(host, port) == want
}

func unverifiedMessage(scheme string, th store.TargetHost) string {
	return fmt.Sprintf("host %s is not verified for this API key (%s): serve a file at %s whose body is the line %s",
		th.Host, th.Detail, fileURL(scheme, th.Host, th.Token), th.Token)
}

func fileURL(scheme, hostKey, token string) string {
	return strings.ToLower(scheme) + "://" + hostKey + Path(token)
}

// fetch reports whether the file at target contains token, what it
// found, and the IP that served it. Failures of the host are outcomes,
// not errors.
func (v *Verifier) fetch(ctx context.Context, target, token string) (bool, string, netip.Addr) {
	var remote netip.Addr
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
		if ap, err := netip.ParseAddrPort(ci.Conn.RemoteAddr().String()); err == nil {
			remote = ap.Addr().Unmap()
		}
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return false, fmt.Sprintf("cannot request %s: %v", target, err), remote
	}
	req.Header.Set("User-Agent", "benchq-verify")
	resp, err := v.client.Do(req)
	if err != nil {
		return false, fmt.Sprintf("fetching %s failed: %v", target, unwrapURLError(err)), remote
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return false, fmt.Sprintf("%s answered %s to %q; redirects are not followed, the host itself must serve the file",
			target, resp.Status, resp.Header.Get("Location")), remote
	case resp.StatusCode != http.StatusOK:
		return false, fmt.Sprintf("%s answered %s, want 200", target, resp.Status), remote
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, v.maxBody))
	if err != nil {
		return false, fmt.Sprintf("reading %s failed: %v", target, err), remote
	}
	if !hasLine(string(body), token) {
		return false, fmt.Sprintf("the first %d bytes of %s do not hold the token on a line of its own", v.maxBody, target), remote
	}
	if !remote.IsValid() { // nothing to pin the load to: as good as unserved
		return false, fmt.Sprintf("%s served the token over a connection with no IP address", target), remote
	}
	return true, fmt.Sprintf("%s serves the token", target), remote
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

// unverified is ErrUnverified's error for problems: coded so that the
// client reads "not verified" with the fields to fix, and wrapping the
// invalid-spec error so that callers treating both alike need one test.
func unverified(problems []job.FieldError) error {
	inv := job.Invalid(problems)
	e := errcode.Wrap(inv, errcode.TargetUnverified, inv.Message)
	e.Problems = problems
	return e
}
