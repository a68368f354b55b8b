package main

import (
	"context"
	"fmt"
	"net"

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
// names through the system resolver.
func (m *Main) urlChecker() *netguard.Checker { return &netguard.Checker{Policy: m.Policy} }

// urlSession is the API's check for the URLs of one request: lookups end
// with the request and share one budget.
func (m *Main) urlSession(ctx context.Context) job.URLChecker { return m.urlChecker().Session(ctx) }

// guardedDial is the policy-enforcing dialer for net/http clients: checked
// resolution, then the kernel's address checked once more by Control.
func (m *Main) guardedDial() targetverify.DialContext {
	return (&netguard.Dialer{Policy: m.Policy, Dialer: &net.Dialer{Control: m.Policy.Control}}).DialContext
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
