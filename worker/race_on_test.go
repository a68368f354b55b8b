//go:build race

package worker_test

// raceEnabled: the race detector slows the load generator several times
// over, so tests that measure timing skip under it.
const raceEnabled = true
