// Package netguard decides which network addresses benchq may send load or
// webhooks to, and enforces that decision when each connection is dialed.
//
// A URL is checked twice: when a job is submitted (Checker, which also
// resolves names, so the client gets a 422 naming the target) and again at
// connect time on the resolved IP, because a DNS name may resolve to a
// different address later (rebinding). The Dialer resolves once, checks
// every address and dials the checked IP itself, so there is no second
// lookup an attacker could race. LoadGuard applies the same rules to the
// load engine, which dials by itself: each run resolves a host once, every
// connect is admitted just before it is made, and a guarded run costs the
// system calls of an unguarded one. Policy.Control checks the address the
// kernel connects to, for clients that dial by themselves. One Policy
// serves targets and webhooks alike, and both checks share one routine, so
// submission and dial cannot disagree about a host.
package netguard
