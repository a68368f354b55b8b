package main

import (
	"context"
	"fmt"
	"net"
	"net/url"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
	"github.com/benchq/benchq/worker"
)

// policyFor builds the address policy of a process. The all-in-one mode
// is a developer's machine: loopback only, plus what the operator lists.
// serve and worker face real networks: public addresses, plus what the
// operator lists, and never private, loopback or metadata addresses
// otherwise.
func policyFor(c config.Config) (*netguard.Policy, error) {
	var (
		p   *netguard.Policy
		err error
	)
	if c.Command == config.CommandAll {
		p, err = netguard.NewLoopbackOnly(c.AllowTargets)
	} else {
		p, err = netguard.New(c.AllowTargets)
	}
	if err != nil {
		return nil, fmt.Errorf("benchq: --allow-targets: %w", err)
	}
	return p, nil
}

// urlChecker checks target and webhook URLs at submission, resolving
// names through m.Resolver (the system's by default).
func (m *Main) urlChecker() *netguard.Checker {
	return &netguard.Checker{Policy: m.Policy, Resolver: m.Resolver}
}

// urlSession is the API's check for the URLs of one request: lookups end
// with the request and share one budget.
func (m *Main) urlSession(ctx context.Context) job.URLChecker {
	return withAllowHint(m.urlChecker().Session(ctx))
}

// withAllowHint adds to a refusal an allowlist entry would lift the
// setting that admits it: a newcomer pointing benchq at a private host
// learns the knob from the 422 rather than from the source.
func withAllowHint(check job.URLChecker) job.URLChecker {
	return func(u *url.URL) error {
		err := check(u)
		if err == nil || !netguard.Allowlistable(err) {
			return err
		}
		return netguard.Advise(err, "; the operator admits it with --allow-targets or BENCHQ_ALLOW_TARGETS (a CIDR or host glob)")
	}
}

// guardedDial is the policy-enforcing dialer of benchq's own net/http
// clients (verification fetches, webhooks). netguard.Dialer dials only
// the IPs it checked, so its inner dialer has no Control hook: Control
// sees a bare IP and would refuse what an allowlist glob admitted by name,
// making a host verifiable and reachable by webhooks only when the load
// dialer (which never had Control) disagreed.
func (m *Main) guardedDial() func(ctx context.Context, network, address string) (net.Conn, error) {
	return (&netguard.Dialer{Policy: m.Policy, Resolver: m.Resolver}).DialContext
}

// targetVerifier serves the /v1/targets endpoints and, with
// --verify-targets, the checks at submission and before each job runs.
func (m *Main) targetVerifier(st *store.Store) *targetverify.Verifier {
	return targetverify.New(st, targetverify.Config{Dial: m.guardedDial()})
}

// workerTargets is the worker's check before each job, only with
// --verify-targets (a nil interface, not a nil pointer, skips it).
func (m *Main) workerTargets(st *store.Store) worker.TargetChecker {
	if !m.Config.VerifyTargets {
		return nil
	}
	return m.targetVerifier(st)
}
