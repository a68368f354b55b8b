// Package testservers starts real web servers (Debian's nginx, apache2 and
// lighttpd) for tests, each on a free 127.0.0.1 port with a configuration
// in the test's temp directory, serving a fixed set of files, and stops it
// when the test ends. Benchmarks of benchq are compared with ab's against
// them, so their configurations pin what would make two runs' byte counts
// differ by chance: keep-alive connections are never closed after a
// request count, and no access log is written.
//
// A missing server binary (or ab, see Require) skips the test with a
// message saying what to install, except under CI (CI set), where it fails
// the test, so a green CI run always means the comparisons ran.
//
// Hostile servers (StartHostile) are the opposite: raw-TCP loopback
// servers that misbehave in one named way on every connection (huge or
// endless bodies, garbage status lines, resets, header floods, short
// bodies, silence), for tests that a client survives what a target sends.
// ServeTCP is the loopback listener under them and under RawH2, for a
// test of any package that writes its own bytes on the wire.
//
// StartFasthttp is the plain case: an in-process fasthttp server answering
// with the test's handler. StartTarget and StartCounting add a count of the
// requests and when the latest came (a Target), what the worker's and the
// service's end-to-end tests check the load by; StartFailing is a Target
// that drops every nth request unanswered; LoopbackOnly is the URL
// policy of tests that admit loopback targets only.
//
// A SpanTarget records when it served each load, named by a request
// header, so a test can see from the target's side whether two loads ran
// at once.
//
// StartCapacity is a target of known capacity (so many requests in
// service at once, each held so long), for the capacity search's tests.
//
// StartCPUTarget runs cputarget, a Go server whose CPU a test knows (a
// handler that burns it, one that sleeps, client_golang's process
// metrics), as a process of its own, pinned with taskset and optionally
// favoured by the scheduler; ProcessCPU and SystemBusyCPU read what
// /proc says was used. StartExporter runs one of Debian's Prometheus
// exporters on a free loopback port. FavouredCommand runs any process
// (a benchq worker, say) pinned and favoured the same way, and
// FavouredNginx nginx, for tests that need a process to have its core on
// a shared machine.
package testservers
