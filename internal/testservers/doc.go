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
// Broken servers (Resetting, Answering, Silent) are plain Go listeners on
// 127.0.0.1 that misbehave the same way on every connection, for tests of
// what benchq makes of a target that is down or broken.
package testservers
