package measure

import "time"

// saturatedShare is the share of the client's CPU capacity above which a
// run counts as client-bound. A run the client limits keeps its threads on
// the CPU for all of it but the ramp-up (dials before the first request)
// and the tail (the last requests in flight, fewer than the workers); on a
// loopback target those cost a few percent, so a pegged client measures 93
// to 100 %. A client waiting on its server sleeps in the poller between
// requests and stays far below. 90 % leaves the pegged case its few percent
// of slack without flagging a client that merely works hard.
const saturatedShare = 0.9

// ClientCapacity is the CPU time the load generator could have spent over
// elapsed: elapsed × the cores it may run on, but no more cores than the
// run has workers. A worker is one goroutine doing one request after
// another, so a run with c = 1 can keep at most about one core busy however
// many the machine has: using all of one core of two is that run's limit.
// cores 0 (not known on this system) gives 0.
func ClientCapacity(elapsed time.Duration, cores, concurrency int) time.Duration {
	n := min(cores, concurrency)
	if n <= 0 || elapsed <= 0 {
		return 0
	}
	return elapsed * time.Duration(n)
}

// ClientSaturated is benchq's one rule for a client-bound run: the load
// generator's busy time, CPU it used (cpu) plus time its threads were
// ready but waited for a CPU (wait), is at least 90 % of ClientCapacity.
// The wait counts because a generator that other processes crowd off its
// cores limits the run as surely as one that uses them all itself. Such a
// run's req/s measures the client, not the server. Unknown usage (capacity
// 0) is never saturated.
//
// The rule sees the process as a whole; it cannot see one goroutine
// serialising the rest on a lock while cores idle, which the engine avoids
// by design (one shard of histograms per core, per-worker counters).
//
// spin is the part of cpu the engine spent spinning on reads that had no
// data yet (spin_linux.go): it only does that with a core to spare, so it
// is waiting, not work, and does not count.
func ClientSaturated(cpu, wait, spin, elapsed time.Duration, cores, concurrency int) bool {
	capacity := ClientCapacity(elapsed, cores, concurrency)
	return capacity > 0 && float64(cpu+wait-spin) >= saturatedShare*float64(capacity)
}

// ClientSaturated applies the rule to m's usage over its elapsed time.
func (m *Measurement) ClientSaturated() bool {
	return ClientSaturated(m.ClientCPU, m.ClientCPUWait, m.ClientSpin, m.Elapsed, m.ClientCores, m.Concurrency)
}
