package netguard

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultLookupTimeout bounds the DNS lookup of a submission-time check
// when Checker.Timeout is zero: a client waits for it, and a name that
// takes longer to resolve is as good as unreachable.
const DefaultLookupTimeout = 2 * time.Second

// Checker is the submission-time check of a target or webhook URL. Unlike
// Policy.CheckURL it resolves names, so a job naming a host that resolves
// to a private address is refused with a 422 when it is submitted rather
// than failing at its first connection. The Dialer checks again at
// connect time, because the answer may change in between (rebinding).
type Checker struct {
	Policy   *Policy
	Resolver Resolver      // zero means net.DefaultResolver
	Timeout  time.Duration // zero means DefaultLookupTimeout
}

// CheckURL refuses a URL whose scheme is not http or https, that has no
// host, or whose host is or resolves to any refused address. A host an
// allowlist glob admits is not looked up. The error names the host and
// wraps ErrRefused, or ErrUnresolved (and the resolver's error) when the
// name does not resolve; either is an *Error whose message is written
// for the client.
func (c *Checker) CheckURL(ctx context.Context, u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return refuse("scheme %q (only http and https)", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return refuse("the URL has no host")
	}
	if c.Policy.hostAllowed(host) {
		return nil
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultLookupTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := c.Policy.admit(ctx, c.Resolver, host)
	return err
}

// Check is CheckURL bounded by the Checker's timeout alone, in the shape
// of job.URLChecker (which carries no context).
func (c *Checker) Check(u *url.URL) error {
	return c.CheckURL(context.Background(), u)
}

// Session returns the check of one submission's URLs, in the shape of
// job.URLChecker: lookups end with ctx (the request), all of them share
// one Timeout (a spec listing thousands of slow names must not hold a
// request for thousands of timeouts), and each host is resolved once.
func (c *Checker) Session(ctx context.Context) func(*url.URL) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultLookupTimeout
	}
	deadline := time.Now().Add(timeout)
	var mu sync.Mutex
	seen := map[string]error{}
	return func(u *url.URL) error {
		key := u.Scheme + "://" + strings.ToLower(u.Hostname())
		mu.Lock()
		defer mu.Unlock()
		if err, ok := seen[key]; ok {
			return err
		}
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		err := c.CheckURL(ctx, u)
		seen[key] = err
		return err
	}
}
