// Package targetverify proves that the holder of an API key controls the
// hosts its jobs send load to, so benchq cannot be aimed at someone
// else's server. Each (key, host) pair gets a random token; the host must
// serve it in /benchq-verify-<token>.txt on the port the load would use.
// The file is fetched without following redirects (a redirect would let any
// host vouch for another), with a short timeout and a small body cap,
// through the same policy-enforcing dialer as the load itself. The API
// checks a job's targets when it is submitted, the worker again before the
// job sends its first request, and the outcome of each fetch is kept in
// internal/store for GET /v1/targets.
//
// What is verified is the IP that served the token, not the name: the
// worker's check returns those IPs (netguard.Pins) and the job's load
// connects to them only, so a DNS change after the check cannot move the
// load. A Host header naming another host than its URL (the load sends it
// and uses it as the TLS name) is refused outright, and one spec may name
// at most MaxHosts hosts, all checked within one Deadline.
package targetverify
