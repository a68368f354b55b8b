// Package logbuf is a log sink for tests: a buffer that the goroutines of
// a server, a worker or a process reader may write while the test reads
// it, so that what a component logged can be asserted on (a secret never
// appears, a fault is reported once).
package logbuf
