package measure

import (
	"fmt"
	"time"
)

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

// MinJudgedElapsed is the shortest run whose client CPU is judged: the
// kernel accounts CPU time in scheduler ticks (4 ms at HZ=250), so a run of
// a few milliseconds can read 100 % busy or idle by one tick, and its
// dials and last requests in flight are all of it.
const MinJudgedElapsed = 250 * time.Millisecond

// minUsedCores is the CPU the load generator must itself have used, in
// cores over the run, before it can be called short of CPU: a client
// using less than half a core was not the limit, whatever else crowded
// the machine (that shows as its wait, which alone must not raise the
// mark).
const minUsedCores = 0.5

// ClientSaturated is benchq's one rule for a client-bound run: the load
// generator's busy time, CPU it used (cpu) plus time its threads were
// ready but waited for a CPU (wait), is at least 90 % of ClientCapacity,
// and it used at least half a core itself. The wait counts because a
// generator that other processes crowd off its cores limits the run as
// surely as one that uses them all itself; but only beside real work of
// its own, so that a busy machine alone never marks a light run. Such a
// run's req/s measures the client, not the server. Unknown usage
// (capacity 0) and runs shorter than MinJudgedElapsed are never
// saturated.
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
	used := cpu - spin
	return capacity > 0 && elapsed >= MinJudgedElapsed &&
		float64(used) >= minUsedCores*float64(elapsed) &&
		float64(used+wait) >= saturatedShare*float64(capacity)
}

// ClientUnjudged says why m's load generator cannot be judged short of
// CPU or not, and "" when it can: the system did not report its CPU, the
// run was too short to tell, or no request succeeded (a refused port or a
// server answering only errors: there is no throughput the client could
// have limited).
func (m *Measurement) ClientUnjudged() string {
	switch {
	case m.ClientCores <= 0:
		return "the system does not report the load generator's CPU"
	case m.Elapsed < MinJudgedElapsed:
		return fmt.Sprintf("the run took %s, under the %s needed to judge the load generator's CPU", m.Elapsed.Round(time.Millisecond), MinJudgedElapsed)
	case m.Complete-max(m.Failures.Length, m.Non2xx) <= 0:
		return "no request succeeded: there is no throughput the load generator could have limited"
	}
	return ""
}

// ClientSaturated applies the rule to m's usage over its elapsed time; a
// run ClientUnjudged names a reason for is not saturated.
func (m *Measurement) ClientSaturated() bool {
	return m.ClientUnjudged() == "" &&
		ClientSaturated(m.ClientCPU, m.ClientCPUWait, m.ClientSpin, m.Elapsed, m.ClientCores, m.Concurrency)
}
