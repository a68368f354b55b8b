// Package jobtest holds what tests of several packages build and check
// jobs with, so that each is written once: SweepSpec, a spec of named
// loopback targets; Queue, an in-memory queue that records the job tasks
// it is given (or fails); CheckShardedRun, the assertions on a stored run
// that several worker processes measured together; CheckQuantiles, a
// merged measurement's quantiles against the raw samples it merged.
package jobtest
